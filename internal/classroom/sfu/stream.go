package sfu

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"
)

// maxPendingCandidates bounds the remote candidates queued before a remote
// description.
const maxPendingCandidates = 64

// gate holds back a PeerConnection's local ICE candidates until its
// description (offer or answer) has been handed to send, so that a client
// never gets a candidate for a PeerConnection it has not made yet. End of
// candidates (nil) is not signalled: the protocol has no message for it and
// browsers do not need one.
type gate struct {
	room         *Room
	conn, stream string

	mu      sync.Mutex
	ready   bool
	closed  bool
	pending []webrtc.ICECandidateInit
}

func newGate(r *Room, conn, stream string) *gate {
	return &gate{room: r, conn: conn, stream: stream}
}

// candidate is the PeerConnection's OnICECandidate handler.
func (g *gate) candidate(c *webrtc.ICECandidate) {
	if c == nil {
		return
	}
	init := c.ToJSON()
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	if !g.ready {
		g.pending = append(g.pending, init)
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	g.room.send(g.conn, Signal{Kind: "ice", Stream: g.stream, Candidate: &init})
}

// open sends the held candidates and lets later ones through.
func (g *gate) open() {
	g.mu.Lock()
	if g.closed || g.ready {
		g.mu.Unlock()
		return
	}
	g.ready = true
	pending := g.pending
	g.pending = nil
	g.mu.Unlock()
	for _, init := range pending {
		g.room.send(g.conn, Signal{Kind: "ice", Stream: g.stream, Candidate: &init})
	}
}

// close drops every later candidate.
func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.pending = nil
	g.mu.Unlock()
}

// upStream is a publication: the publisher's PeerConnection and its tracks.
type upStream struct {
	room                              *Room
	seq                               uint64
	id, clientID, conn, userID, label string
	pc                                *webrtc.PeerConnection
	gate                              *gate
	tracks                            []*upTrack // one per m-line; fixed at creation
	published                         atomic.Bool
}

func (up *upStream) event(kind string) Event {
	return Event{Kind: kind, Stream: up.id, Conn: up.conn, UserID: up.userID, Label: up.label}
}

// labelRecording is the label of a stream published for the recording
// only (the teacher's capture of the classroom tab): the tap gets it, no
// subscriber does.
const labelRecording = "recording"

// forwarded reports whether the stream goes to subscribers.
func (up *upStream) forwarded() bool { return up.label != labelRecording }

// speakingEvent is the "speaking" event of the stream.
func (up *upStream) speakingEvent(on bool) Event {
	e := up.event("speaking")
	e.Speaking = on
	return e
}

// shutdown stops signalling and keyframe requests; the caller closes pc.
func (up *upStream) shutdown() {
	up.gate.close()
	for _, t := range up.tracks {
		t.keyframe.stop()
	}
}

// upTrack is one received track of a publication and the list of its
// subscribers' tracks.
type upTrack struct {
	up       *upStream
	kind     webrtc.RTPCodecType
	receiver *webrtc.RTPReceiver
	keyframe keyframer

	ssrc  atomic.Uint32 // media SSRC, once the track arrived
	mu    sync.Mutex    // serialises changes to downs
	downs atomic.Pointer[[]*downTrack]
}

// codec returns the capability forwarded for a track kind.
func codec(kind webrtc.RTPCodecType) webrtc.RTPCodecCapability {
	if kind == webrtc.RTPCodecTypeAudio {
		return webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"}
	}
	return webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}
}

// newUpStream makes the publisher's PeerConnection and answers its offer.
// r.mu is held.
func (r *Room) newUpStream(c *conn, clientStream, label, offer string) (*upStream, string, error) {
	pc, err := r.sfu.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, "", fmt.Errorf("the media server could not make a connection: %w", err)
	}
	r.seq++
	up := &upStream{
		room:     r,
		seq:      r.seq,
		id:       streamID(r.seq),
		clientID: clientStream,
		conn:     c.id,
		userID:   c.userID,
		label:    label,
		pc:       pc,
		gate:     newGate(r, c.id, clientStream),
	}
	fail := func(err error) (*upStream, string, error) {
		up.shutdown()
		go pc.Close()
		return nil, "", err
	}
	pc.OnICECandidate(up.gate.candidate)
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return fail(fmt.Errorf("the offer was refused: %w", err))
	}
	for _, tr := range pc.GetTransceivers() {
		t := &upTrack{up: up, kind: tr.Kind(), receiver: tr.Receiver()}
		t.keyframe.send = t.sendPLI
		t.downs.Store(&[]*downTrack{})
		up.tracks = append(up.tracks, t)
	}
	pc.OnTrack(func(remote *webrtc.TrackRemote, recv *webrtc.RTPReceiver) {
		for _, t := range up.tracks {
			if t.receiver == recv {
				t.forward(remote)
				return
			}
		}
	})
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed {
			r.publisherGone(up)
		}
	})
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		return fail(fmt.Errorf("the offer could not be answered: %w", err))
	}
	if err := checkAnswer(answer.SDP); err != nil {
		return fail(err)
	}
	if err := pc.SetLocalDescription(answer); err != nil {
		return fail(fmt.Errorf("the offer could not be answered: %w", err))
	}
	return up, answer.SDP, nil
}

// checkAnswer refuses an answer that rejects an m-line, which happens when
// the offer has no codec the server forwards.
func checkAnswer(sdp string) error {
	parsed, err := unmarshalSDP(webrtc.SDPTypeAnswer, sdp)
	if err != nil {
		return fmt.Errorf("the offer could not be answered: %w", err)
	}
	for _, m := range parsed.MediaDescriptions {
		if m.MediaName.Port.Value == 0 {
			return fmt.Errorf("the offer has no %s codec this server accepts (it takes VP8 video and Opus audio)", m.MediaName.Media)
		}
	}
	return nil
}

// forwardedExtensions returns the ids of the header extensions that are
// passed on, by URI.
func forwardedExtensions(params []webrtc.RTPHeaderExtensionParameter) map[uint8]string {
	m := make(map[uint8]string)
	for _, p := range params {
		if p.URI == audioLevelURI || p.URI == videoOrientationURI {
			m[uint8(p.ID)] = p.URI
		}
	}
	return m
}

// forward reads the publisher's RTP and writes it to every subscriber. It
// returns when the publisher's PeerConnection closes.
func (t *upTrack) forward(remote *webrtc.TrackRemote) {
	r := t.up.room
	t.ssrc.Store(uint32(remote.SSRC()))
	id := r.tapStart(t, remote)
	defer r.tapEnd(t)
	go drainRTCP(t)
	ext := forwardedExtensions(t.receiver.GetParameters().HeaderExtensions)
	var levelID uint8 // the audio level extension's id, 0 without
	if t.kind == webrtc.RTPCodecTypeAudio {
		for id, uri := range ext {
			if uri == audioLevelURI {
				levelID = id
			}
		}
	}
	var sp speech
	began := time.Now()
	defer func() {
		if sp.speaking {
			r.events(t.up.speakingEvent(false))
		}
	}()
	for {
		p, _, err := remote.ReadRTP()
		if err != nil {
			return
		}
		r.packetsIn.Add(1)
		r.bytesIn.Add(uint64(p.MarshalSize()))
		if t.up.published.CompareAndSwap(false, true) {
			r.events(t.up.event("published"))
		}
		if levelID != 0 && p.Header.Extension {
			if lv, ok := audioLevel(p.Header.GetExtension(levelID)); ok && sp.level(time.Since(began).Milliseconds(), lv) {
				r.events(t.up.speakingEvent(sp.speaking))
			}
		}
		for _, d := range *t.downs.Load() {
			d.write(p, ext)
		}
		// p is not reused or changed after this (the writes above copy
		// its header), so the tap may keep it.
		r.tapRTP(t.up.id, id, p)
	}
}

// drainRTCP reads a track's RTCP (sender reports), so that the
// interceptors see it, and passes the sender reports to the room's tap.
func drainRTCP(t *upTrack) {
	for {
		pkts, _, err := t.receiver.ReadRTCP()
		if err != nil {
			return
		}
		t.up.room.tapRTCP(t, pkts)
	}
}

// sendPLI asks the publisher for a keyframe.
func (t *upTrack) sendPLI() {
	ssrc := t.ssrc.Load()
	if ssrc == 0 {
		return // no media yet; the first frame is a keyframe anyway
	}
	if err := t.up.pc.WriteRTCP([]rtcp.Packet{&rtcp.PictureLossIndication{MediaSSRC: ssrc}}); err == nil {
		t.up.room.keyframes.Add(1)
	}
}

// requestKeyframe asks for a keyframe, throttled.
func (t *upTrack) requestKeyframe() {
	if t.kind == webrtc.RTPCodecTypeVideo {
		t.keyframe.request()
	}
}

func (t *upTrack) addDown(d *downTrack) {
	t.mu.Lock()
	list := append(append([]*downTrack(nil), *t.downs.Load()...), d)
	t.downs.Store(&list)
	t.mu.Unlock()
}

func (t *upTrack) removeDown(d *downTrack) {
	t.mu.Lock()
	old := *t.downs.Load()
	list := make([]*downTrack, 0, len(old))
	for _, x := range old {
		if x != d {
			list = append(list, x)
		}
	}
	t.downs.Store(&list)
	t.mu.Unlock()
}

// keyframer sends keyframe requests at most once per keyframeInterval. A
// request inside the interval is not dropped but sent at its end (several
// such requests make one).
type keyframer struct {
	send func()

	mu      sync.Mutex
	last    time.Time
	pending bool
	stopped bool
	timer   *time.Timer
}

func (k *keyframer) request() {
	k.mu.Lock()
	if k.stopped || k.pending {
		k.mu.Unlock()
		return
	}
	wait := keyframeInterval - time.Since(k.last)
	if wait <= 0 {
		k.last = time.Now()
		k.mu.Unlock()
		k.send()
		return
	}
	k.pending = true
	k.timer = time.AfterFunc(wait, func() {
		k.mu.Lock()
		k.pending = false
		if k.stopped {
			k.mu.Unlock()
			return
		}
		k.last = time.Now()
		k.mu.Unlock()
		k.send()
	})
	k.mu.Unlock()
}

func (k *keyframer) stop() {
	k.mu.Lock()
	k.stopped = true
	if k.timer != nil {
		k.timer.Stop()
	}
	k.mu.Unlock()
}

// downStream forwards one publication to one subscriber connection.
type downStream struct {
	room   *Room
	conn   string
	up     *upStream
	pc     *webrtc.PeerConnection
	gate   *gate
	tracks []*downTrack

	mu        sync.Mutex // guards remoteSet and pending
	remoteSet bool
	pending   []webrtc.ICECandidateInit
}

// downTrack is one forwarded track.
type downTrack struct {
	ds      *downStream
	up      *upTrack
	local   *webrtc.TrackLocalStaticRTP
	sender  *webrtc.RTPSender
	active  atomic.Bool                      // connected: packets are written
	sendExt atomic.Pointer[map[string]uint8] // negotiated extension ids by URI, once answered
}

// newDownStream makes a forwarding PeerConnection and its offer. r.mu is
// held.
func (r *Room) newDownStream(c *conn, up *upStream) (*downStream, string, error) {
	pc, err := r.sfu.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, "", err
	}
	ds := &downStream{room: r, conn: c.id, up: up, pc: pc, gate: newGate(r, c.id, up.id)}
	fail := func(err error) (*downStream, string, error) {
		ds.gate.close()
		go pc.Close()
		return nil, "", err
	}
	for i, t := range up.tracks {
		local, err := webrtc.NewTrackLocalStaticRTP(codec(t.kind), t.kind.String()+strconv.Itoa(i), up.id)
		if err != nil {
			return fail(err)
		}
		tr, err := pc.AddTransceiverFromTrack(local, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly})
		if err != nil {
			return fail(err)
		}
		ds.tracks = append(ds.tracks, &downTrack{ds: ds, up: t, local: local, sender: tr.Sender()})
	}
	pc.OnICECandidate(ds.gate.candidate)
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		switch st {
		case webrtc.PeerConnectionStateConnected:
			for _, d := range ds.tracks {
				d.active.Store(true)
				d.up.requestKeyframe()
			}
		case webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed:
			r.subscriberGone(ds)
		}
	})
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		return fail(err)
	}
	if err := pc.SetLocalDescription(offer); err != nil {
		return fail(err)
	}
	for _, d := range ds.tracks {
		go d.readRTCP()
		d.up.addDown(d)
	}
	return ds, offer.SDP, nil
}

// shutdown stops forwarding and signalling; the caller closes pc.
func (ds *downStream) shutdown() {
	ds.gate.close()
	for _, d := range ds.tracks {
		d.active.Store(false)
		d.up.removeDown(d)
	}
}

// answer applies the subscriber's answer.
func (ds *downStream) answer(sdp string) error {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.remoteSet {
		return errors.New("this stream was already answered")
	}
	if err := ds.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: sdp}); err != nil {
		return fmt.Errorf("the answer was refused: %w", err)
	}
	ds.remoteSet = true
	for _, d := range ds.tracks {
		ext := make(map[string]uint8)
		for _, p := range d.sender.GetParameters().HeaderExtensions {
			if p.URI == audioLevelURI || p.URI == videoOrientationURI {
				ext[p.URI] = uint8(p.ID)
			}
		}
		d.sendExt.Store(&ext)
	}
	for _, c := range ds.pending {
		if err := ds.pc.AddICECandidate(c); err != nil {
			ds.room.sfu.log.Debug("queued ICE candidate refused", "stream", ds.up.id, "conn", ds.conn, "err", err)
		}
	}
	ds.pending = nil
	return nil
}

// candidate adds a subscriber's candidate, or queues it until the answer.
func (ds *downStream) candidate(c webrtc.ICECandidateInit) error {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if !ds.remoteSet {
		if len(ds.pending) >= maxPendingCandidates {
			return errors.New("too many ICE candidates before the answer")
		}
		ds.pending = append(ds.pending, c)
		return nil
	}
	if err := ds.pc.AddICECandidate(c); err != nil {
		return fmt.Errorf("invalid ICE candidate: %w", err)
	}
	return nil
}

// readRTCP reads the subscriber's RTCP (the interceptors need it) and
// passes keyframe requests to the publisher.
func (d *downTrack) readRTCP() {
	for {
		pkts, _, err := d.sender.ReadRTCP()
		if err != nil {
			return
		}
		for _, p := range pkts {
			switch p.(type) {
			case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
				d.up.requestKeyframe()
			}
		}
	}
}

// write forwards one packet. The header is copied, so that the
// subscriber's interceptors never touch the publisher's packet, and header
// extensions are renumbered for the subscriber's PeerConnection (ids are
// negotiated per PeerConnection) or dropped.
func (d *downTrack) write(p *rtp.Packet, ext map[uint8]string) {
	if !d.active.Load() {
		return
	}
	out := *p
	out.Header.Extension = false
	out.Header.ExtensionProfile = 0
	out.Header.Extensions = nil
	if send := d.sendExt.Load(); send != nil && p.Header.Extension {
		for _, id := range p.Header.GetExtensionIDs() {
			uri, ok := ext[id]
			if !ok {
				continue
			}
			if nid, ok := (*send)[uri]; ok {
				// An error (an id or payload out of range) only drops
				// this extension.
				_ = out.Header.SetExtension(nid, p.Header.GetExtension(id))
			}
		}
	}
	r := d.ds.room
	if err := d.local.WriteRTP(&out); err != nil {
		r.writeErrors.Add(1)
		return
	}
	r.packetsOut.Add(1)
	r.bytesOut.Add(uint64(out.MarshalSize()))
}

// unmarshalSDP parses a session description.
func unmarshalSDP(typ webrtc.SDPType, s string) (*sdp.SessionDescription, error) {
	d := webrtc.SessionDescription{Type: typ, SDP: s}
	return d.Unmarshal()
}
