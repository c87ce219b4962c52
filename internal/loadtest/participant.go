package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// Timeouts of the signalling.
const (
	dialTimeout    = 10 * time.Second
	welcomeTimeout = 10 * time.Second
	writeTimeout   = 10 * time.Second
	pingInterval   = 10 * time.Second
	maxMessage     = 8 << 20 // a welcome carries the whole room
)

// participant is one user in the room: a WebSocket and one PeerConnection
// per stream, as the classroom protocol has it (docs/classroom-protocol.md).
// The teacher publishes; a student answers the server's offers and counts
// what arrives.
type participant struct {
	r       *runner
	userID  string
	teacher bool
	ws      *websocket.Conn
	welcome chan error // the hello's outcome: nil for a welcome

	mu     sync.Mutex
	closed bool
	peers  map[string]*peer // by stream id

	video, audio counter // a student's received tracks
}

// peer is the PeerConnection of one stream. Local candidates are held
// until the description they belong to has been sent, and remote ones
// until the remote description is set.
type peer struct {
	p      *participant
	stream string
	pc     *webrtc.PeerConnection

	lmu   sync.Mutex // guards sent and local
	sent  bool
	local []webrtc.ICECandidateInit

	rmu     sync.Mutex // guards remote and pending
	remote  bool
	pending []webrtc.ICECandidateInit
}

// Messages of the classroom protocol, as far as the load test needs them.
type outMsg struct {
	Type      string                   `json:"type"`
	Protocol  int                      `json:"protocol,omitempty"`
	Session   string                   `json:"session,omitempty"`
	Kind      string                   `json:"kind,omitempty"`
	Stream    string                   `json:"stream,omitempty"`
	Label     string                   `json:"label,omitempty"`
	SDP       string                   `json:"sdp,omitempty"`
	Candidate *webrtc.ICECandidateInit `json:"candidate,omitempty"`
}

type inMsg struct {
	Type      string          `json:"type"`
	Code      string          `json:"code"`
	Message   string          `json:"message"`
	Kind      string          `json:"kind"`
	Reason    string          `json:"reason"`
	Stream    json.RawMessage `json:"stream"` // a string in rtc messages, an object in events
	Label     string          `json:"label"`
	SDP       string          `json:"sdp"`
	Candidate json.RawMessage `json:"candidate"`
}

// join opens the WebSocket, says hello and waits for the welcome.
func (r *runner) join(ctx context.Context, wsURL, session, userID string, teacher bool) (*participant, error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	ws, _, err := websocket.Dial(dctx, wsURL, &websocket.DialOptions{HTTPClient: r.http})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("WebSocket: %w", err)
	}
	ws.SetReadLimit(maxMessage)
	p := &participant{r: r, userID: userID, teacher: teacher, ws: ws, welcome: make(chan error, 1), peers: make(map[string]*peer)}
	if !r.track(p) {
		ws.CloseNow()
		return nil, errStopped
	}
	done := make(chan struct{})
	if !r.goroutine(func() { defer close(done); p.read() }) {
		return nil, errStopped
	}
	r.goroutine(func() { p.ping(done) })
	if err := p.send(outMsg{Type: "hello", Protocol: 1, Session: session}); err != nil {
		return nil, fmt.Errorf("hello: %w", err)
	}
	t := time.NewTimer(welcomeTimeout)
	defer t.Stop()
	select {
	case err := <-p.welcome:
		if err != nil {
			return nil, err
		}
		return p, nil
	case <-t.C:
		return nil, errors.New("no welcome within 10 s")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// send writes one message.
func (p *participant) send(m outMsg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(p.r.ctx, writeTimeout)
	defer cancel()
	return p.ws.Write(ctx, websocket.MessageText, b)
}

// ping keeps the connection alive until done is closed or the run stops.
func (p *participant) ping(done <-chan struct{}) {
	t := time.NewTicker(pingInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := p.send(outMsg{Type: "ping"}); err != nil {
				p.r.log.Debug("ping", "user", p.userID, "err", err)
			}
		case <-done:
			return
		case <-p.r.ctx.Done():
			return
		}
	}
}

// read handles the server's messages until the socket closes.
func (p *participant) read() {
	welcomed := false
	for {
		_, b, err := p.ws.Read(p.r.ctx)
		if err != nil {
			if !welcomed {
				p.welcome <- fmt.Errorf("socket closed before the welcome: %w", err)
			} else if !p.r.stopping() {
				p.r.log.Warn("socket closed", "user", p.userID, "err", err)
			}
			return
		}
		var m inMsg
		if err := json.Unmarshal(b, &m); err != nil {
			p.r.log.Warn("message is not JSON", "user", p.userID, "err", err)
			continue
		}
		switch m.Type {
		case "welcome":
			if !welcomed {
				welcomed = true
				p.welcome <- nil
			}
		case "fail":
			if !welcomed {
				welcomed = true
				p.welcome <- fmt.Errorf("refused: %s: %s", m.Code, m.Message)
			}
		case "rtc":
			p.rtc(m)
		case "error":
			p.r.log.Warn("server error", "user", p.userID, "code", m.Code, "message", m.Message)
		case "event":
			if m.Kind == "ended" {
				p.r.log.Warn("the room ended", "user", p.userID, "reason", m.Reason)
			}
		}
	}
}

// rtc handles a signalling message.
func (p *participant) rtc(m inMsg) {
	var stream string
	if err := json.Unmarshal(m.Stream, &stream); err != nil {
		p.r.log.Warn("rtc message without a stream id", "user", p.userID, "kind", m.Kind)
		return
	}
	switch m.Kind {
	case "offer":
		if p.teacher {
			return // the load test's teacher receives nothing
		}
		if err := p.answer(stream, m.SDP); err != nil {
			p.r.log.Warn("answer", "user", p.userID, "stream", stream, "err", err)
		}
	case "answer":
		if pe := p.peer(stream); pe != nil {
			if err := pe.setRemote(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: m.SDP}); err != nil {
				p.r.log.Warn("answer refused", "user", p.userID, "stream", stream, "err", err)
			}
		}
	case "ice":
		var c webrtc.ICECandidateInit
		if len(m.Candidate) == 0 || json.Unmarshal(m.Candidate, &c) != nil {
			return
		}
		if pe := p.peer(stream); pe != nil {
			pe.addRemote(c)
		}
	case "close":
		p.mu.Lock()
		pe := p.peers[stream]
		delete(p.peers, stream)
		p.mu.Unlock()
		if pe != nil && !p.r.goroutine(func() { pe.pc.Close() }) {
			pe.pc.Close()
		}
	}
}

func (p *participant) peer(stream string) *peer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peers[stream]
}

// newPeer makes a PeerConnection for stream and registers it; it fails
// once the participant is closed.
func (p *participant) newPeer(stream string) (*peer, error) {
	pc, err := p.r.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	pe := &peer{p: p, stream: stream, pc: pc}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		pc.Close()
		return nil, errStopped
	}
	if old := p.peers[stream]; old != nil {
		go old.pc.Close() // not waited for: the stream was offered again
	}
	p.peers[stream] = pe
	p.mu.Unlock()
	pc.OnICECandidate(pe.localCandidate)
	return pe, nil
}

// localCandidate is the OnICECandidate handler.
func (pe *peer) localCandidate(c *webrtc.ICECandidate) {
	if c == nil {
		return // the protocol has no end-of-candidates message
	}
	init := c.ToJSON()
	pe.lmu.Lock()
	if !pe.sent {
		pe.local = append(pe.local, init)
		pe.lmu.Unlock()
		return
	}
	pe.lmu.Unlock()
	pe.sendCandidate(init)
}

// described sends the candidates held until the description went out.
func (pe *peer) described() {
	pe.lmu.Lock()
	pe.sent = true
	held := pe.local
	pe.local = nil
	pe.lmu.Unlock()
	for _, c := range held {
		pe.sendCandidate(c)
	}
}

func (pe *peer) sendCandidate(c webrtc.ICECandidateInit) {
	if err := pe.p.send(outMsg{Type: "rtc", Kind: "ice", Stream: pe.stream, Candidate: &c}); err != nil {
		pe.p.r.log.Debug("send candidate", "user", pe.p.userID, "err", err)
	}
}

// setRemote applies the remote description and the candidates that came
// before it.
func (pe *peer) setRemote(d webrtc.SessionDescription) error {
	pe.rmu.Lock()
	defer pe.rmu.Unlock()
	if err := pe.pc.SetRemoteDescription(d); err != nil {
		return err
	}
	pe.remote = true
	for _, c := range pe.pending {
		if err := pe.pc.AddICECandidate(c); err != nil {
			pe.p.r.log.Debug("candidate refused", "user", pe.p.userID, "err", err)
		}
	}
	pe.pending = nil
	return nil
}

func (pe *peer) addRemote(c webrtc.ICECandidateInit) {
	pe.rmu.Lock()
	defer pe.rmu.Unlock()
	if !pe.remote {
		pe.pending = append(pe.pending, c)
		return
	}
	if err := pe.pc.AddICECandidate(c); err != nil {
		pe.p.r.log.Debug("candidate refused", "user", pe.p.userID, "err", err)
	}
}

// publish offers a stream of one track with label and returns its
// PeerConnection; the answer arrives on the socket.
func (p *participant) publish(stream, label string, track webrtc.TrackLocal, src *source) (*peer, error) {
	pe, err := p.newPeer(stream)
	if err != nil {
		return nil, err
	}
	tr, err := pe.pc.AddTransceiverFromTrack(track, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly})
	if err != nil {
		return nil, err
	}
	// Read the server's RTCP: pion's interceptors (NACK responder, reports)
	// act on it, and a keyframe request makes the next frame a keyframe.
	p.r.goroutine(func() {
		for {
			pkts, _, err := tr.Sender().ReadRTCP()
			if err != nil {
				return
			}
			for _, pkt := range pkts {
				switch pkt.(type) {
				case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
					src.keyframe.Store(true)
				}
			}
		}
	})
	offer, err := pe.pc.CreateOffer(nil)
	if err != nil {
		return nil, err
	}
	if err := pe.pc.SetLocalDescription(offer); err != nil {
		return nil, err
	}
	if err := p.send(outMsg{Type: "rtc", Kind: "offer", Stream: stream, Label: label, SDP: offer.SDP}); err != nil {
		return nil, err
	}
	pe.described()
	return pe, nil
}

// answer answers a server offer and counts the packets of its tracks.
func (p *participant) answer(stream, sdp string) error {
	pe, err := p.newPeer(stream)
	if err != nil {
		return err
	}
	pe.pc.OnTrack(func(t *webrtc.TrackRemote, recv *webrtc.RTPReceiver) {
		c := &p.video
		if t.Kind() == webrtc.RTPCodecTypeAudio {
			c = &p.audio
		}
		p.r.goroutine(func() { drainRTCP(recv) })
		p.r.goroutine(func() { count(t, c) })
	})
	if err := pe.setRemote(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: sdp}); err != nil {
		return err
	}
	answer, err := pe.pc.CreateAnswer(nil)
	if err != nil {
		return err
	}
	if err := pe.pc.SetLocalDescription(answer); err != nil {
		return err
	}
	if err := p.send(outMsg{Type: "rtc", Kind: "answer", Stream: stream, SDP: answer.SDP}); err != nil {
		return err
	}
	pe.described()
	return nil
}

// count reads a remote track until its PeerConnection closes. Only the
// RTP header is parsed: the load test counts packets, it does not decode.
func count(t *webrtc.TrackRemote, c *counter) {
	buf := make([]byte, 1500)
	var h rtp.Header
	for {
		n, _, err := t.Read(buf)
		if err != nil {
			return
		}
		if _, err := h.Unmarshal(buf[:n]); err != nil {
			continue
		}
		c.add(h.SequenceNumber, n)
	}
}

// drainRTCP reads a receiver's RTCP (the server's sender reports), which
// pion's receiver-report interceptor needs.
func drainRTCP(recv *webrtc.RTPReceiver) {
	for {
		if _, _, err := recv.ReadRTCP(); err != nil {
			return
		}
	}
}

// shut marks the participant closed and returns its PeerConnections.
func (p *participant) shut() []*webrtc.PeerConnection {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	pcs := make([]*webrtc.PeerConnection, 0, len(p.peers))
	for _, pe := range p.peers {
		pcs = append(pcs, pe.pc)
	}
	clear(p.peers)
	return pcs
}
