package cluster_test

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/lectern-lms/lectern/internal/classroom/rtctest"
)

// media is a synthetic WebRTC client of a harness participant, in the
// test process: it publishes a microphone (Opus RTP, 20 ms frames) and
// answers the owner's offers of the others' streams, counting the RTP it
// receives. Its signalling goes over the participant's WebSocket (relayed
// when it entered through another node); its media goes to the room's
// owner's UDP port.
type media struct {
	t        *testing.T
	c        *client
	api      *webrtc.API
	inbox    chan map[string]any
	received atomic.Int64

	mu  sync.Mutex
	pcs map[string]*webrtc.PeerConnection
}

func newMedia(t *testing.T, c *client) *media {
	m := &media{t: t, c: c, api: rtctest.NewAPI(t, rtctest.Options{}),
		inbox: make(chan map[string]any, 256), pcs: map[string]*webrtc.PeerConnection{}}
	c.mu.Lock()
	c.rtc = m.inbox
	c.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-m.inbox:
				m.handle(sig)
			}
		}
	}()
	t.Cleanup(func() {
		close(done)
		m.reset()
	})
	return m
}

// reset closes every PeerConnection (the connection they were negotiated
// on is gone).
func (m *media) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, pc := range m.pcs {
		pc.Close()
		delete(m.pcs, id)
	}
}

func (m *media) signal(sig map[string]any) {
	sig["type"] = "rtc"
	m.c.send(m.t, sig)
}

// publish sends a microphone stream named id until its PeerConnection
// closes.
func (m *media) publish(id string) {
	pc, err := m.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		m.t.Fatal(err)
	}
	tr, err := webrtc.NewTrackLocalStaticRTP(rtctest.Opus, "audio", id)
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := pc.AddTrack(tr); err != nil {
		m.t.Fatal(err)
	}
	m.mu.Lock()
	m.pcs[id] = pc
	m.mu.Unlock()
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		m.t.Fatal(err)
	}
	sdp, err := rtctest.Gathered(pc, offer)
	if err != nil {
		m.t.Fatal(err)
	}
	m.signal(map[string]any{"kind": "offer", "stream": id, "label": "mic", "sdp": sdp})
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var seq uint16
		var ts uint32
		for range tick.C {
			if pc.ConnectionState() == webrtc.PeerConnectionStateClosed {
				return
			}
			seq++
			ts += 960
			if err := tr.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, SequenceNumber: seq, Timestamp: ts}, Payload: []byte{0x78, 1, 2, 3}}); err != nil {
				return
			}
		}
	}()
}

func (m *media) handle(sig map[string]any) {
	kind, _ := sig["kind"].(string)
	stream, _ := sig["stream"].(string)
	sdp, _ := sig["sdp"].(string)
	m.mu.Lock()
	pc := m.pcs[stream]
	m.mu.Unlock()
	switch kind {
	case "offer": // a stream of another participant
		if pc != nil {
			pc.Close()
		}
		pc, local, err := rtctest.Answer(m.api, sdp, &m.received, true)
		if err != nil {
			m.t.Errorf("%s: offer: %v", m.c.name, err)
			return
		}
		m.mu.Lock()
		m.pcs[stream] = pc
		m.mu.Unlock()
		m.signal(map[string]any{"kind": "answer", "stream": stream, "sdp": local})
	case "answer":
		if pc != nil {
			if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: sdp}); err != nil {
				m.t.Errorf("%s: answer: %v", m.c.name, err)
			}
		}
	case "ice":
		raw, _ := json.Marshal(sig["candidate"])
		var cand webrtc.ICECandidateInit
		if pc != nil && json.Unmarshal(raw, &cand) == nil && cand.Candidate != "" {
			pc.AddICECandidate(cand)
		}
	case "close":
		if pc != nil {
			go pc.Close()
			m.mu.Lock()
			delete(m.pcs, stream)
			m.mu.Unlock()
		}
	}
}

// flowing waits until m receives RTP again (more than it had) and
// reports when.
func (m *media) flowing(t *testing.T, what string, within time.Duration) time.Time {
	t.Helper()
	base := m.received.Load()
	deadline := time.Now().Add(within)
	for m.received.Load() < base+10 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s receives no media (%d packets so far)", m.c.name, what, m.received.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Now()
}
