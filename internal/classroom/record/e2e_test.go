package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/lectern-lms/lectern/internal/classroom/rtctest"
	"github.com/lectern-lms/lectern/internal/classroom/sfu"
)

// The end-to-end tests run pion publishers and a subscriber through a real
// SFU on loopback, with the recorder as the room's tap.

const wait = 20 * time.Second // only turns a hang into a failure

// classroom is a room with pion clients: it plays the room service's part
// of routing signals.
type classroom struct {
	t    *testing.T
	sfu  *sfu.SFU
	room *sfu.Room
	api  *webrtc.API

	mu    sync.Mutex
	peers map[string]*peer
}

// peer is one client connection: its PeerConnections by stream id as it
// knows them, and the RTP it received.
type peer struct {
	c        *classroom
	conn     string
	inbox    chan sfu.Signal
	mu       sync.Mutex
	pcs      map[string]*webrtc.PeerConnection
	received atomic.Int64
}

func newClassroom(t *testing.T) *classroom {
	s, err := sfu.New(sfu.Config{UDPAddr: "127.0.0.1:0", Loopback: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// The clients send RTCP sender reports (pion's interceptors), as browsers do.
	c := &classroom{t: t, sfu: s, api: rtctest.NewAPI(t, rtctest.Options{Interceptors: true}), peers: map[string]*peer{}}
	c.room = s.NewRoom(c.send, nil)
	t.Cleanup(c.room.Close)
	return c
}

func (c *classroom) send(conn string, sig sfu.Signal) {
	c.mu.Lock()
	p := c.peers[conn]
	c.mu.Unlock()
	select {
	case p.inbox <- sig:
	default:
		c.t.Errorf("inbox of %s full", conn)
	}
}

func (c *classroom) join(conn, user string, receive bool) *peer {
	p := &peer{c: c, conn: conn, inbox: make(chan sfu.Signal, 1024), pcs: map[string]*webrtc.PeerConnection{}}
	c.mu.Lock()
	c.peers[conn] = p
	c.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-p.inbox:
				p.handle(sig)
			}
		}
	}()
	c.t.Cleanup(func() {
		close(done)
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, pc := range p.pcs {
			pc.Close()
		}
	})
	c.room.AddConn(conn, user, receive)
	return p
}

func (p *peer) signal(sig sfu.Signal) {
	if err := p.c.room.Signal(p.conn, sig); err != nil && !errors.Is(err, sfu.ErrUnknownStream) {
		p.c.t.Errorf("%s: Signal %s: %v", p.conn, sig.Kind, err)
	}
}

func (p *peer) handle(sig sfu.Signal) {
	t := p.c.t
	p.mu.Lock()
	pc := p.pcs[sig.Stream]
	p.mu.Unlock()
	switch sig.Kind {
	case "offer":
		pc, answer, err := rtctest.Answer(p.c.api, sig.SDP, &p.received, false)
		if err != nil {
			t.Error(err)
			return
		}
		p.mu.Lock()
		p.pcs[sig.Stream] = pc
		p.mu.Unlock()
		stream := sig.Stream
		p.signal(sfu.Signal{Kind: "answer", Stream: stream, SDP: answer})
		pc.OnICECandidate(func(cand *webrtc.ICECandidate) {
			if cand != nil {
				init := cand.ToJSON()
				p.signal(sfu.Signal{Kind: "ice", Stream: stream, Candidate: &init})
			}
		})
	case "answer":
		if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: sig.SDP}); err != nil {
			t.Errorf("%s: answer: %v", p.conn, err)
		}
	case "ice":
		if pc != nil {
			if err := pc.AddICECandidate(*sig.Candidate); err != nil {
				t.Errorf("%s: candidate: %v", p.conn, err)
			}
		}
	case "close":
		if pc != nil {
			go pc.Close()
		}
	}
}

// publisher sends synthetic VP8 and Opus as a browser would: a VP8
// keyframe first and whenever a PLI comes, RTP timestamps from the wall
// clock, and (pion's interceptors) RTCP sender reports.
type publisher struct {
	pc            *webrtc.PeerConnection
	tracks        []*webrtc.TrackLocalStaticRTP
	width, height atomic.Int32
	keyframe      atomic.Bool // the next video frame is a keyframe
	plis          atomic.Int64
	stop          chan struct{}
}

// publish publishes a stream of the given kinds and sends 20 ms frames
// until the test ends. Each frame carries its capture time.
func (p *peer) publish(id, label string, kinds ...webrtc.RTPCodecType) (string, *publisher) {
	t := p.c.t
	pc, err := p.c.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	pub := &publisher{pc: pc, stop: make(chan struct{})}
	pub.width.Store(320)
	pub.height.Store(240)
	pub.keyframe.Store(true)
	for i, k := range kinds {
		cap := webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}
		if k == webrtc.RTPCodecTypeAudio {
			cap = rtctest.Opus
		}
		tr, err := webrtc.NewTrackLocalStaticRTP(cap, k.String()+string(rune('0'+i)), id)
		if err != nil {
			t.Fatal(err)
		}
		sender, err := pc.AddTrack(tr)
		if err != nil {
			t.Fatal(err)
		}
		pub.tracks = append(pub.tracks, tr)
		go func() {
			for {
				pkts, _, err := sender.ReadRTCP()
				if err != nil {
					return
				}
				for _, pkt := range pkts {
					if _, ok := pkt.(*rtcp.PictureLossIndication); ok {
						pub.plis.Add(1)
						pub.keyframe.Store(true)
					}
				}
			}
		}()
	}
	var (
		mu        sync.Mutex
		published bool
		pending   []webrtc.ICECandidateInit
	)
	pc.OnICECandidate(func(cand *webrtc.ICECandidate) {
		if cand == nil {
			return
		}
		init := cand.ToJSON()
		mu.Lock()
		if !published {
			pending = append(pending, init)
			mu.Unlock()
			return
		}
		mu.Unlock()
		p.signal(sfu.Signal{Kind: "ice", Stream: id, Candidate: &init})
	})
	p.mu.Lock()
	p.pcs[id] = pc
	p.mu.Unlock()
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	sid, err := p.c.room.Publish(p.conn, id, label, offer.SDP)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	published = true
	for _, init := range pending {
		p.signal(sfu.Signal{Kind: "ice", Stream: id, Candidate: &init})
	}
	mu.Unlock()
	go pub.run()
	t.Cleanup(func() { close(pub.stop) })
	return sid, pub
}

// epoch is the zero of the capture times the test publishers stamp.
var epoch = time.Now()

func (pub *publisher) run() {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	seq := make([]uint16, len(pub.tracks))
	for {
		select {
		case <-pub.stop:
			return
		case <-tick.C:
		}
		now := time.Now()
		capture := float64(now.Sub(epoch)) / float64(time.Millisecond)
		elapsed := now.Sub(start).Seconds()
		for i, tr := range pub.tracks {
			var pkts []*rtp.Packet
			if tr.Kind() == webrtc.RTPCodecTypeVideo {
				key := pub.keyframe.Swap(false)
				size := 400
				if key {
					size = 3000
				}
				f := stamp(vp8Frame(key, int(pub.width.Load()), int(pub.height.Load()), 'v', size), capture)
				pkts = vp8Packets(f, seq[i], 1000+uint32(elapsed*90000), 1100)
			} else {
				pkts = []*rtp.Packet{{Header: rtp.Header{Version: 2, SequenceNumber: seq[i], Timestamp: 5000 + uint32(elapsed*48000)}, Payload: stamp([]byte{0x78}, capture)}}
			}
			seq[i] += uint16(len(pkts))
			for _, p := range pkts {
				if err := tr.WriteRTP(p); err != nil {
					return
				}
			}
		}
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEndToEnd records a camera (published before the recording starts),
// a microphone and a screen with sound through the SFU, with a pause and a
// resolution change, and reads the files back.
func TestEndToEnd(t *testing.T) {
	c := newClassroom(t)
	ann := c.join("c1", "ann", false)
	bob := c.join("c2", "bob", true)
	dir := t.TempDir()
	errs := make(chan error, 1)
	rec := New(DirStorage{Dir: dir}, Options{
		RequestKeyframe: c.room.RequestKeyframe,
		OnError:         func(err error) { errs <- err },
		Logger:          testLogger(),
	})
	defer rec.Stop()

	cam, camPub := ann.publish("cam", "camera", webrtc.RTPCodecTypeVideo)
	eventually(t, "the camera at bob", func() bool { return bob.received.Load() > 20 })
	plis := camPub.plis.Load()
	c.room.SetTap(rec) // replays the camera's start
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	mic, _ := ann.publish("mic", "mic", webrtc.RTPCodecTypeAudio)
	screen, _ := ann.publish("scr", "screen", webrtc.RTPCodecTypeVideo, webrtc.RTPCodecTypeAudio)
	// The recorder asked for a keyframe of the running camera.
	eventually(t, "a keyframe request for the camera", func() bool { return camPub.plis.Load() > plis })

	// Let the sender reports come (one a second), then pause.
	written := func() uint64 { return rec.Stats().Frames }
	eventually(t, "frames written", func() bool { return written() > 100 })
	time.Sleep(1200 * time.Millisecond)
	if err := rec.Pause(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := rec.Resume(); err != nil {
		t.Fatal(err)
	}
	n := written()
	eventually(t, "frames after the resume", func() bool { return written() > n+100 })
	time.Sleep(200 * time.Millisecond)
	// The camera's resolution changes (with a keyframe, as encoders do).
	camPub.width.Store(640)
	camPub.height.Store(480)
	camPub.keyframe.Store(true)
	time.Sleep(1200 * time.Millisecond)
	c.room.SetTap(nil)
	files, err := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		t.Errorf("OnError: %v", err)
	default:
	}
	if st := rec.Stats(); st.Dropped != 0 || st.Lost != 0 {
		t.Errorf("stats %+v", st)
	}

	// The recording clock's zero, from the event log.
	var t0 time.Time
	events, err := os.ReadFile(filepath.Join(dir, EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(events))
	for sc.Scan() {
		var e struct {
			Type, Action, At string
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Type == "recording" && e.Action == "start" {
			t0, _ = time.Parse(time.RFC3339Nano, e.At)
		}
	}
	shift := float64(t0.Sub(epoch)) / float64(time.Millisecond) // capture time of recording time 0

	type want struct {
		stream  string
		segment int
		codecs  []string
		width   int
	}
	wants := []want{
		{cam, 0, []string{"V_VP8"}, 320},
		{mic, 0, []string{"A_OPUS"}, 0},
		{screen, 0, []string{"V_VP8", "A_OPUS"}, 320},
		// The resolution change goes on in the segment's one file, whose
		// largest picture it is.
		{cam, 1, []string{"V_VP8"}, 640},
		{mic, 1, []string{"A_OPUS"}, 0},
		{screen, 1, []string{"V_VP8", "A_OPUS"}, 320},
	}
	var got []want
	lo, hi := 1e9, -1e9
	// Play time minus capture time, by 100 ms of capture time, over all
	// files: the streams of a connection line up.
	buckets := map[int][]float64{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if f.Size != int64(len(b)) {
			t.Errorf("%s: size %d, %d bytes on disk", f.Name, f.Size, len(b))
		}
		p := readWebM(t, f.Name, b, false)
		got = append(got, want{f.StreamID, f.Segment, p.codecs(), f.Width})
		if len(p.blocks) < 10 || p.cues == 0 || p.duration < float64(f.DurationMs)-1 || p.duration > float64(f.DurationMs)+1 {
			t.Errorf("%s: %d blocks, %d cues, Duration %.0f, DurationMs %d", f.Name, len(p.blocks), p.cues, p.duration, f.DurationMs)
		}
		flo, fhi := 1e9, -1e9
		for _, bl := range p.blocks {
			c := captured(bl.data) - shift
			d := float64(f.StartMs+bl.t) - c
			flo, fhi = min(flo, d), max(fhi, d)
			buckets[int(c/100)] = append(buckets[int(c/100)], d)
		}
		t.Logf("%s: from %d for %d ms, play time minus capture time %.1f to %.1f ms", f.Name, f.StartMs, f.DurationMs, flo, fhi)
		lo, hi = min(lo, flo), max(hi, fhi)
	}
	slices.SortStableFunc(got, func(a, b want) int { return a.segment - b.segment })
	if len(got) != len(wants) {
		t.Fatalf("files %+v, want %+v", got, wants)
	}
	for _, w := range wants {
		if !slices.ContainsFunc(got, func(g want) bool {
			return g.stream == w.stream && g.segment == w.segment && slices.Equal(g.codecs, w.codecs) && g.width == w.width
		}) {
			t.Errorf("no file %+v in %+v", w, got)
		}
	}
	t.Logf("play time minus capture time: %.1f to %.1f ms over all files", lo, hi)
	worst := 0.0
	for _, ds := range buckets {
		worst = max(worst, slices.Max(ds)-slices.Min(ds))
	}
	if worst > 100 {
		t.Errorf("out of sync: media captured within 100 ms plays up to %.1f ms apart", worst)
	}
}

// TestEndToEndDiskFull fills the disk while a class runs: the teacher is
// told (OnError), the class goes on.
func TestEndToEndDiskFull(t *testing.T) {
	c := newClassroom(t)
	ann := c.join("c1", "ann", false)
	bob := c.join("c2", "bob", true)
	st := newMemStorage()
	st.budget = 90_000
	errs := make(chan error, 1)
	rec := New(st, Options{RequestKeyframe: c.room.RequestKeyframe, OnError: func(err error) { errs <- err }, Logger: testLogger()})
	defer rec.Stop()
	c.room.SetTap(rec)
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	ann.publish("cam", "camera", webrtc.RTPCodecTypeVideo)
	ann.publish("mic", "mic", webrtc.RTPCodecTypeAudio)
	select {
	case err := <-errs:
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("OnError: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("the disk never filled up")
	}
	n := bob.received.Load()
	out := c.room.Stats().PacketsOut
	eventually(t, "media at bob after the failure", func() bool { return bob.received.Load() > n+50 })
	if c.room.Stats().PacketsOut <= out {
		t.Error("forwarding stopped")
	}
	if _, err := rec.Stop(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Stop: %v", err)
	}
	if got := st.names(); !slices.Contains(got, EventsFile) || !slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, ".webm") }) {
		t.Errorf("files %q", got)
	}
}
