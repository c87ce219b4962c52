package sfu

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/lectern-lms/lectern/internal/classroom/rtctest"
)

// wait is the longest any test waits for media or a signal. Nothing is
// timed against it; it only turns a hang into a failure.
const wait = 20 * time.Second

func testLogger() *slog.Logger {
	if os.Getenv("SFU_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func newTestSFU(t *testing.T, public ...string) *SFU {
	t.Helper()
	s, err := New(Config{UDPAddr: "127.0.0.1:0", Loopback: true, PublicIPs: public, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// clientAPI is the pion API the test clients use: loopback only, default
// codecs and interceptors.
func clientAPI(t *testing.T) *webrtc.API {
	// Browsers offer and accept the audio level.
	return rtctest.NewAPI(t, rtctest.Options{Interceptors: true, AudioExtensions: []string{audioLevelURI}})
}

// harness plays the room service: it routes send and events to test
// clients.
type harness struct {
	t      *testing.T
	api    *webrtc.API
	room   *Room
	events chan Event

	mu      sync.Mutex
	clients map[string]*client
}

func newHarness(t *testing.T, s *SFU) *harness {
	h := &harness{t: t, api: clientAPI(t), events: make(chan Event, 256), clients: make(map[string]*client)}
	h.room = s.NewRoom(h.send, func(e Event) {
		select {
		case h.events <- e:
		default:
			t.Errorf("event queue full, dropped %+v", e)
		}
	})
	t.Cleanup(h.room.Close)
	return h
}

func (h *harness) send(conn string, sig Signal) {
	h.mu.Lock()
	c := h.clients[conn]
	h.mu.Unlock()
	if c == nil {
		h.t.Errorf("signal for unknown conn %s: %+v", conn, sig)
		return
	}
	select {
	case c.inbox <- sig:
	default:
		h.t.Errorf("inbox of %s full, dropped %+v", conn, sig)
	}
}

// event waits for the next event.
func (h *harness) event() Event {
	h.t.Helper()
	select {
	case e := <-h.events:
		return e
	case <-time.After(wait):
		h.t.Fatal("no event")
		return Event{}
	}
}

// client is a test client on one connection: it answers server offers,
// trickles candidates, counts the RTP it receives and records closes.
type client struct {
	h           *harness
	conn, user  string
	inbox       chan Signal
	done        chan struct{}
	mu          sync.Mutex
	pcs         map[string]*webrtc.PeerConnection      // by stream id (own id for publications)
	offers      map[string]Signal                      // server offers received, by stream
	offerTotal  int                                    // server offers received
	packets     map[string]*atomic.Int64               // RTP received, by server stream id
	last        map[string]*atomic.Pointer[rtp.Packet] // last RTP packet, by server stream id
	closes      []string                               // streams closed by the server
	pubPending  map[string][]webrtc.ICECandidateInit
	published   map[string]bool
	signalError []error
}

func (h *harness) join(conn, user string, receive bool) *client {
	return h.joinClient(conn, user, receive, true)
}

// joinPassive adds a connection whose signals stay in its inbox.
func (h *harness) joinPassive(conn, user string, receive bool) *client {
	return h.joinClient(conn, user, receive, false)
}

func (h *harness) joinClient(conn, user string, receive, active bool) *client {
	c := &client{
		h: h, conn: conn, user: user,
		inbox:      make(chan Signal, 1024),
		done:       make(chan struct{}),
		pcs:        make(map[string]*webrtc.PeerConnection),
		offers:     make(map[string]Signal),
		packets:    make(map[string]*atomic.Int64),
		last:       make(map[string]*atomic.Pointer[rtp.Packet]),
		pubPending: make(map[string][]webrtc.ICECandidateInit),
		published:  make(map[string]bool),
	}
	h.mu.Lock()
	h.clients[conn] = c
	h.mu.Unlock()
	if active {
		go c.loop()
	}
	h.t.Cleanup(c.close)
	h.room.AddConn(conn, user, receive)
	return c
}

func (c *client) close() {
	select {
	case <-c.done:
		return
	default:
	}
	close(c.done)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pc := range c.pcs {
		pc.Close()
	}
}

func (c *client) signal(sig Signal) {
	if err := c.h.room.Signal(c.conn, sig); err != nil && !errors.Is(err, ErrUnknownStream) {
		c.h.t.Errorf("%s: Signal %s %s: %v", c.conn, sig.Kind, sig.Stream, err)
	}
}

func (c *client) loop() {
	for {
		select {
		case <-c.done:
			return
		case sig := <-c.inbox:
			c.handle(sig)
		}
	}
}

func (c *client) handle(sig Signal) {
	t := c.h.t
	c.mu.Lock()
	pc := c.pcs[sig.Stream]
	c.mu.Unlock()
	switch sig.Kind {
	case "offer":
		if sig.UserID == "" || sig.Label == "" {
			t.Errorf("offer without user or label: %+v", sig)
		}
		pc, err := c.h.api.NewPeerConnection(webrtc.Configuration{})
		if err != nil {
			t.Error(err)
			return
		}
		n, last := &atomic.Int64{}, &atomic.Pointer[rtp.Packet]{}
		c.mu.Lock()
		c.pcs[sig.Stream] = pc
		c.offers[sig.Stream] = sig
		c.offerTotal++
		c.packets[sig.Stream] = n
		c.last[sig.Stream] = last
		c.mu.Unlock()
		stream := sig.Stream
		pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
			for {
				p, _, err := tr.ReadRTP()
				if err != nil {
					return
				}
				last.Store(p)
				n.Add(1)
			}
		})
		if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: sig.SDP}); err != nil {
			t.Error(err)
			return
		}
		answer, err := pc.CreateAnswer(nil)
		if err != nil {
			t.Error(err)
			return
		}
		if err := pc.SetLocalDescription(answer); err != nil {
			t.Error(err)
			return
		}
		c.signal(Signal{Kind: "answer", Stream: stream, SDP: answer.SDP})
		// Candidates only after the answer, as a browser would.
		pc.OnICECandidate(func(cand *webrtc.ICECandidate) {
			if cand != nil {
				init := cand.ToJSON()
				c.signal(Signal{Kind: "ice", Stream: stream, Candidate: &init})
			}
		})
	case "answer":
		if pc == nil {
			t.Errorf("%s: answer for unknown stream %s", c.conn, sig.Stream)
			return
		}
		if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: sig.SDP}); err != nil {
			t.Errorf("%s: answer: %v", c.conn, err)
		}
	case "ice":
		if pc == nil || pc.RemoteDescription() == nil {
			t.Errorf("%s: ice before the description of %s", c.conn, sig.Stream)
			return
		}
		if err := pc.AddICECandidate(*sig.Candidate); err != nil {
			t.Errorf("%s: AddICECandidate: %v", c.conn, err)
		}
	case "close":
		c.mu.Lock()
		c.closes = append(c.closes, sig.Stream)
		delete(c.pcs, sig.Stream)
		c.mu.Unlock()
		if pc != nil {
			go pc.Close()
		}
	default:
		t.Errorf("unexpected signal %+v", sig)
	}
}

// publisher is a client publication that sends synthetic media.
type publisher struct {
	pc     *webrtc.PeerConnection
	tracks []*webrtc.TrackLocalStaticSample
	pli    atomic.Int64 // PLIs received from the server
}

// publish publishes a stream with one track per kind, trickling its
// candidates, and starts sending synthetic frames.
func (c *client) publish(id, label string, kinds ...webrtc.RTPCodecType) (string, *publisher, error) {
	t := c.h.t
	pc, err := c.h.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	p := &publisher{pc: pc}
	for i, k := range kinds {
		cap := webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}
		if k == webrtc.RTPCodecTypeAudio {
			cap = webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}
		}
		tr, err := webrtc.NewTrackLocalStaticSample(cap, k.String()+string(rune('0'+i)), id)
		if err != nil {
			t.Fatal(err)
		}
		sender, err := pc.AddTrack(tr)
		if err != nil {
			t.Fatal(err)
		}
		p.tracks = append(p.tracks, tr)
		go func() {
			for {
				pkts, _, err := sender.ReadRTCP()
				if err != nil {
					return
				}
				for _, pkt := range pkts {
					if _, ok := pkt.(*rtcp.PictureLossIndication); ok {
						p.pli.Add(1)
					}
				}
			}
		}()
	}
	c.mu.Lock()
	c.pcs[id] = pc
	c.mu.Unlock()
	pc.OnICECandidate(func(cand *webrtc.ICECandidate) {
		if cand == nil {
			return
		}
		init := cand.ToJSON()
		c.mu.Lock()
		if !c.published[id] {
			c.pubPending[id] = append(c.pubPending[id], init)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.signal(Signal{Kind: "ice", Stream: id, Candidate: &init})
	})
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	sid, err := c.h.room.Publish(c.conn, id, label, offer.SDP)
	if err != nil {
		pc.Close()
		return "", nil, err
	}
	c.mu.Lock()
	c.published[id] = true
	pending := c.pubPending[id]
	c.mu.Unlock()
	for _, init := range pending {
		c.signal(Signal{Kind: "ice", Stream: id, Candidate: &init})
	}
	go p.run(c.done)
	return sid, p, nil
}

// run writes a synthetic 20 ms frame to every track until done or the
// PeerConnection closes. Forwarding does not decode, so the bytes need not
// be real VP8 or Opus.
func (p *publisher) run(done chan struct{}) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	frame := make([]byte, 1200)
	for i := range frame {
		frame[i] = byte(i)
	}
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if p.pc.ConnectionState() == webrtc.PeerConnectionStateClosed {
			return
		}
		for _, tr := range p.tracks {
			if err := tr.WriteSample(media.Sample{Data: frame[:200], Duration: 20 * time.Millisecond}); err != nil {
				return
			}
		}
	}
}

// eventually polls cond until it holds, failing the test after wait.
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

// received returns the number of RTP packets c got on stream.
func (c *client) received(stream string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.packets[stream]; n != nil {
		return n.Load()
	}
	return 0
}

func (c *client) offerCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.offers)
}

func (c *client) closed(stream string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.closes {
		if s == stream {
			return true
		}
	}
	return false
}

func TestForwarding(t *testing.T) {
	s := newTestSFU(t)
	h := newHarness(t, s)
	ann := h.join("c1", "ann", true)
	bob := h.join("c2", "bob", true)
	cat := h.join("c3", "cat", true)
	ann2 := h.join("c4", "ann", true) // Ann's second device

	cam, camPub, err := ann.publish("cam-1", "camera", webrtc.RTPCodecTypeVideo)
	if err != nil {
		t.Fatal(err)
	}
	mic, _, err := ann.publish("mic-1", "mic", webrtc.RTPCodecTypeAudio)
	if err != nil {
		t.Fatal(err)
	}
	if cam == mic {
		t.Fatalf("both streams have id %q", cam)
	}

	const enough = 20
	for _, c := range []*client{bob, cat} {
		for _, st := range []string{cam, mic} {
			eventually(t, c.conn+" media on "+st, func() bool { return c.received(st) >= enough })
		}
	}
	got := map[string]string{}
	for range 2 {
		e := h.event()
		if e.Kind != "published" || e.Conn != "c1" || e.UserID != "ann" {
			t.Errorf("event %+v, want published by ann on c1", e)
		}
		got[e.Stream] = e.Label
	}
	if got[cam] != "camera" || got[mic] != "mic" {
		t.Errorf("published events %v", got)
	}
	if n := ann2.offerCount(); n != 0 {
		t.Errorf("Ann's second device got %d offers for her own streams", n)
	}
	bob.mu.Lock()
	if o := bob.offers[cam]; o.UserID != "ann" || o.Label != "camera" {
		t.Errorf("offer to bob %+v", o)
	}
	bob.mu.Unlock()

	// A late subscriber gets both streams, and its arrival asks the
	// publisher for a keyframe.
	plis := camPub.pli.Load()
	dan := h.join("c5", "dan", true)
	for _, st := range []string{cam, mic} {
		eventually(t, "late subscriber media on "+st, func() bool { return dan.received(st) >= enough })
	}
	eventually(t, "a PLI for the late subscriber", func() bool { return camPub.pli.Load() > plis })

	want := []StreamInfo{
		{ID: cam, Conn: "c1", UserID: "ann", Label: "camera", ClientID: "cam-1"},
		{ID: mic, Conn: "c1", UserID: "ann", Label: "mic", ClientID: "mic-1"},
	}
	if got := h.room.Streams(); !equalStreams(got, want) {
		t.Errorf("Streams() = %+v, want %+v", got, want)
	}
	st := h.room.Stats()
	if st.Conns != 5 || st.Streams != 2 || st.Subscriptions != 6 {
		t.Errorf("Stats %+v: want 5 conns, 2 streams, 6 subscriptions", st)
	}
	if st.PacketsIn == 0 || st.PacketsOut < st.PacketsIn || st.BytesOut == 0 || st.KeyframeRequests == 0 {
		t.Errorf("Stats %+v: want packets in, more out (3 subscribers), bytes and a keyframe request", st)
	}

	// The teacher closes Ann's camera: everyone hears, Ann with her own id.
	h.room.CloseStream(cam)
	for _, c := range []*client{bob, cat, dan} {
		eventually(t, c.conn+" close of the camera", func() bool { return c.closed(cam) })
	}
	eventually(t, "close to the publisher", func() bool { return ann.closed("cam-1") })
	if got := h.room.Streams(); len(got) != 1 || got[0].ID != mic {
		t.Errorf("after CloseStream, Streams() = %+v", got)
	}

	// Bob closes his subscription to the microphone.
	bob.signal(Signal{Kind: "close", Stream: mic})
	if st := h.room.Stats(); st.Subscriptions != 2 {
		t.Errorf("after Bob's close: %d subscriptions, want 2", st.Subscriptions)
	}

	// Ann leaves: her microphone ends.
	h.room.RemoveConn("c1")
	for _, c := range []*client{cat, dan} {
		eventually(t, c.conn+" close of the microphone", func() bool { return c.closed(mic) })
	}
	if bob.closed(mic) {
		t.Error("Bob got a close for a subscription he closed himself")
	}
	if st := h.room.Stats(); st.Conns != 4 || st.Streams != 0 || st.Subscriptions != 0 {
		t.Errorf("after RemoveConn: %+v", st)
	}
	select {
	case e := <-h.events:
		t.Errorf("unexpected event %+v (the room caused every end)", e)
	default:
	}
}

func equalStreams(a, b []StreamInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPublisherEnds checks the events of a publication that ends without
// the room's doing: by the client's close signal, and by its PeerConnection
// closing.
func TestPublisherEnds(t *testing.T) {
	s := newTestSFU(t)
	h := newHarness(t, s)
	ann := h.join("c1", "ann", false)
	bob := h.join("c2", "bob", true)

	cam, _, err := ann.publish("cam", "camera", webrtc.RTPCodecTypeVideo)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "media", func() bool { return bob.received(cam) > 0 })
	if e := h.event(); e.Kind != "published" {
		t.Fatalf("event %+v, want published", e)
	}
	ann.signal(Signal{Kind: "close", Stream: "cam"})
	if e := h.event(); e.Kind != "ended" || e.Stream != cam {
		t.Errorf("event %+v, want ended %s", e, cam)
	}
	eventually(t, "close to the subscriber", func() bool { return bob.closed(cam) })
	if ann.closed("cam") {
		t.Error("the publisher got a close for a stream it closed itself")
	}

	// The stream id may be used again once closed.
	screen, pub, err := ann.publish("cam", "screen", webrtc.RTPCodecTypeVideo, webrtc.RTPCodecTypeAudio)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "screen media", func() bool { return bob.received(screen) > 0 })
	if e := h.event(); e.Kind != "published" || e.Label != "screen" {
		t.Fatalf("event %+v, want published screen", e)
	}
	pub.pc.Close() // DTLS close_notify: the server's PeerConnection closes
	if e := h.event(); e.Kind != "ended" || e.Stream != screen {
		t.Errorf("event %+v, want ended %s", e, screen)
	}
	eventually(t, "close to the subscriber", func() bool { return bob.closed(screen) })
}

// TestRecordingNotForwarded: a "recording" stream (the teacher's tab) goes
// to the tap only, never to subscribers, present or joining later.
func TestRecordingNotForwarded(t *testing.T) {
	s := newTestSFU(t)
	h := newHarness(t, s)
	ann := h.join("c1", "ann", false)
	bob := h.join("c2", "bob", true)
	tab, _, err := ann.publish("tab", "recording", webrtc.RTPCodecTypeVideo)
	if err != nil {
		t.Fatal(err)
	}
	cam, _, err := ann.publish("cam", "camera", webrtc.RTPCodecTypeVideo)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the camera at bob", func() bool { return bob.received(cam) > 0 })
	carl := h.join("c3", "carl", true)
	eventually(t, "the camera at carl", func() bool { return carl.received(cam) > 0 })
	if bob.received(tab) != 0 || carl.received(tab) != 0 || h.room.Stats().Subscriptions != 2 {
		t.Errorf("the recording stream was forwarded: bob %d, carl %d packets; %d subscriptions", bob.received(tab), carl.received(tab), h.room.Stats().Subscriptions)
	}
}

// offerSDP makes an offer with one sending transceiver per kind, and a
// data channel if withData.
func offerSDP(t *testing.T, api *webrtc.API, withData bool, kinds ...webrtc.RTPCodecType) string {
	t.Helper()
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for _, k := range kinds {
		if _, err := pc.AddTransceiverFromKind(k, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly}); err != nil {
			t.Fatal(err)
		}
	}
	if withData {
		if _, err := pc.CreateDataChannel("x", nil); err != nil {
			t.Fatal(err)
		}
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	return offer.SDP
}

func TestPublishValidation(t *testing.T) {
	s := newTestSFU(t)
	h := newHarness(t, s)
	h.joinPassive("c1", "ann", false)
	video, audio := webrtc.RTPCodecTypeVideo, webrtc.RTPCodecTypeAudio
	tests := []struct {
		name, conn, id, label string
		data                  bool
		kinds                 []webrtc.RTPCodecType
		err                   string // substring; "" = accepted
	}{
		{"camera", "c1", "v", "camera", false, []webrtc.RTPCodecType{video}, ""},
		{"mic", "c1", "a", "mic", false, []webrtc.RTPCodecType{audio}, ""},
		{"screen", "c1", "s", "screen", false, []webrtc.RTPCodecType{video}, ""},
		{"screen with audio", "c1", "sa", "screen", false, []webrtc.RTPCodecType{video, audio}, ""},
		{"recording (the teacher's tab)", "c1", "r", "recording", false, []webrtc.RTPCodecType{video}, ""},
		{"recording with two videos", "c1", "x7", "recording", false, []webrtc.RTPCodecType{video, video}, "a recording stream"},
		{"audio labelled camera", "c1", "x1", "camera", false, []webrtc.RTPCodecType{audio}, "a camera stream must have exactly one video track"},
		{"camera with audio", "c1", "x2", "camera", false, []webrtc.RTPCodecType{video, audio}, "a camera stream"},
		{"video labelled mic", "c1", "x3", "mic", false, []webrtc.RTPCodecType{video}, "a mic stream"},
		{"screen with two videos", "c1", "x4", "screen", false, []webrtc.RTPCodecType{video, video}, "a screen stream"},
		{"data channel", "c1", "x5", "camera", true, []webrtc.RTPCodecType{video}, "only audio and video"},
		{"unknown label", "c1", "x6", "board", false, []webrtc.RTPCodecType{video}, "unknown stream label"},
		{"duplicate id", "c1", "v", "camera", false, []webrtc.RTPCodecType{video}, "already in use"},
		{"reserved id", "c1", "s12", "camera", false, []webrtc.RTPCodecType{video}, "reserved"},
		{"bad id", "c1", "a b", "camera", false, []webrtc.RTPCodecType{video}, "only letters"},
		{"long id", "c1", strings.Repeat("x", 65), "camera", false, []webrtc.RTPCodecType{video}, "1 to 64"},
		{"unknown conn", "c9", "v", "camera", false, []webrtc.RTPCodecType{video}, "not joined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.room.Publish(tt.conn, tt.id, tt.label, offerSDP(t, h.api, tt.data, tt.kinds...))
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.err != "" && err == nil:
				t.Errorf("accepted, want error %q", tt.err)
			case tt.err != "" && !strings.Contains(err.Error(), tt.err):
				t.Errorf("error %q, want %q", err, tt.err)
			}
		})
	}
	if _, err := h.room.Publish("c1", "bad", "camera", "v=0 nonsense"); err == nil {
		t.Error("accepted a broken offer")
	}
	if n := len(h.room.Streams()); n != 5 {
		t.Errorf("%d streams, want the 5 accepted", n)
	}
}

func TestUnsupportedCodec(t *testing.T) {
	s := newTestSFU(t)
	h := newHarness(t, s)
	h.joinPassive("c1", "ann", false)
	me := &webrtc.MediaEngine{}
	err := me.RegisterCodec(webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeH264, ClockRate: 90000},
		PayloadType:        102,
	}, webrtc.RTPCodecTypeVideo)
	if err != nil {
		t.Fatal(err)
	}
	api := webrtc.NewAPI(webrtc.WithMediaEngine(me))
	_, err = h.room.Publish("c1", "v", "camera", offerSDP(t, api, false, webrtc.RTPCodecTypeVideo))
	if err == nil || !strings.Contains(err.Error(), "VP8") {
		t.Errorf("H.264-only offer: error %v, want one naming VP8", err)
	}
}

func TestPublicIPs(t *testing.T) {
	s := newTestSFU(t, "203.0.113.7")
	h := newHarness(t, s)
	ann := h.joinPassive("c1", "ann", false)
	h.room.Publish("c1", "v", "camera", offerSDP(t, h.api, false, webrtc.RTPCodecTypeVideo))
	// The answer, then its candidates, are in ann's inbox.
	var cands []string
	for len(cands) == 0 {
		select {
		case sig := <-ann.inbox:
			if sig.Kind == "ice" {
				cands = append(cands, sig.Candidate.Candidate)
			}
		case <-time.After(wait):
			t.Fatal("no candidate")
		}
	}
	if !strings.Contains(cands[0], "203.0.113.7") || strings.Contains(cands[0], "127.0.0.1") {
		t.Errorf("candidate %q, want the public IP only", cands[0])
	}
}

func TestCheckAnswer(t *testing.T) {
	s := newTestSFU(t)
	api := clientAPI(t)
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	echo := checkEcho(t, s, pc)
	if echo != "hello" {
		t.Errorf("echo %q", echo)
	}
	// Closing the browser's side ends the check and frees its slot.
	pc.Close()
	eventually(t, "the check to end", func() bool { return len(s.checks) == 0 })

	if _, err := s.CheckAnswer(context.Background(), offerSDP(t, api, false, webrtc.RTPCodecTypeVideo)); err == nil {
		t.Error("accepted an offer without a data channel")
	}
	for range maxChecks {
		s.checks <- struct{}{}
	}
	_, err = s.CheckAnswer(context.Background(), offerSDP(t, api, true))
	if err == nil || err.Error() != "too many connectivity checks; try again in a minute" {
		t.Errorf("with %d checks running: %v", maxChecks, err)
	}
	for range maxChecks {
		<-s.checks
	}
}

// checkEcho runs a connectivity check from pc and returns the echo of
// "hello".
func checkEcho(t *testing.T, s *SFU, pc *webrtc.PeerConnection) string {
	t.Helper()
	dc, err := pc.CreateDataChannel("check", nil)
	if err != nil {
		t.Fatal(err)
	}
	echo := make(chan string, 1)
	dc.OnOpen(func() {
		if err := dc.SendText("hello"); err != nil {
			t.Error(err)
		}
	})
	dc.OnMessage(func(m webrtc.DataChannelMessage) { echo <- string(m.Data) })
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	answer, err := s.CheckAnswer(ctx, pc.LocalDescription().SDP)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "a=candidate") {
		t.Error("the answer has no candidates")
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-echo:
		return m
	case <-time.After(wait):
		t.Fatal("no echo")
		return ""
	}
}

// TestHeaderExtensions checks that the audio level is passed on under the
// id negotiated with the subscriber, and that other extensions are not.
func TestHeaderExtensions(t *testing.T) {
	s := newTestSFU(t)
	h := newHarness(t, s)
	ann := h.join("c1", "ann", false)
	bob := h.join("c2", "bob", true)

	// A publisher whose extension ids differ from the server's.
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	me := &webrtc.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"urn:example:one", "urn:example:two", "urn:example:three", audioLevelURI} {
		if err := me.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: uri}, webrtc.RTPCodecTypeAudio); err != nil {
			t.Fatal(err)
		}
	}
	pc, err := webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me)).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	track, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "a", "mic")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTrack(track); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered // not trickled: the candidates are in the offer
	ann.mu.Lock()
	ann.pcs["mic"] = pc // the client loop applies the answer
	ann.mu.Unlock()
	mic, err := h.room.Publish("c1", "mic", "mic", pc.LocalDescription().SDP)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the answer", func() bool { return pc.RemoteDescription() != nil })
	pubID := extensionID(t, pc.GetTransceivers()[0].Sender().GetParameters().HeaderExtensions)

	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for seq := uint16(1); ; seq++ {
			select {
			case <-bob.done:
				return
			case <-tick.C:
			}
			p := &rtp.Packet{
				Header:  rtp.Header{Version: 2, SequenceNumber: seq, Timestamp: uint32(seq) * 960},
				Payload: []byte{0xf8, 0xff, 0xfe},
			}
			p.Header.SetExtension(pubID, []byte{0x85})
			p.Header.SetExtension(1, []byte{0x42, 0x42}) // "urn:example:one", not negotiated
			if err := track.WriteRTP(p); err != nil {
				return
			}
		}
	}()
	eventually(t, "audio at bob", func() bool { return bob.received(mic) > 0 })
	bob.mu.Lock()
	sub, last := bob.pcs[mic], bob.last[mic].Load()
	bob.mu.Unlock()
	subID := extensionID(t, sub.GetTransceivers()[0].Receiver().GetParameters().HeaderExtensions)
	if subID == pubID {
		t.Errorf("audio level has id %d on both sides; the test needs different ids", subID)
	}
	if got := last.Header.GetExtension(subID); len(got) != 1 || got[0] != 0x85 {
		t.Errorf("audio level at the subscriber: % x, want 85", got)
	}
	for _, id := range last.Header.GetExtensionIDs() {
		if string(last.Header.GetExtension(id)) == "\x42\x42" {
			t.Errorf("an extension the server does not forward arrived with id %d", id)
		}
	}
}

// extensionID returns the audio level's negotiated id.
func extensionID(t *testing.T, exts []webrtc.RTPHeaderExtensionParameter) uint8 {
	t.Helper()
	for _, e := range exts {
		if e.URI == audioLevelURI {
			return uint8(e.ID)
		}
	}
	t.Fatalf("audio level not negotiated: %+v", exts)
	return 0
}

// TestSubscriberReoffer checks that a forwarding PeerConnection that
// closes on its own is closed and offered again.
func TestSubscriberReoffer(t *testing.T) {
	s := newTestSFU(t)
	h := newHarness(t, s)
	ann := h.join("c1", "ann", false)
	bob := h.join("c2", "bob", true)
	cam, _, err := ann.publish("cam", "camera", webrtc.RTPCodecTypeVideo)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "media", func() bool { return bob.received(cam) > 0 })
	bob.mu.Lock()
	first := bob.pcs[cam]
	bob.mu.Unlock()
	first.Close() // as if the browser's side had failed, without a close signal
	eventually(t, "a close", func() bool { return bob.closed(cam) })
	eventually(t, "a new offer and media", func() bool {
		bob.mu.Lock()
		again := bob.offerTotal == 2 && bob.pcs[cam] != first
		bob.mu.Unlock()
		return again && bob.received(cam) > 0
	})
	if st := h.room.Stats(); st.Subscriptions != 1 {
		t.Errorf("%d subscriptions, want 1", st.Subscriptions)
	}
}
