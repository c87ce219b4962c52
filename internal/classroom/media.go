package classroom

import (
	"encoding/json"
	"errors"
	"sync"

	"github.com/pion/webrtc/v4"

	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/classroom/sfu"
)

// SFUMedia makes rooms' media engines on s.
func SFUMedia(s *sfu.SFU) room.MediaFactory {
	return func(send func(string, room.Signal), ended func(string)) room.Media {
		m := &sfuMedia{speaking: func(string, bool) {}}
		m.r = s.NewRoom(func(conn string, sig sfu.Signal) {
			out := room.Signal{Kind: sig.Kind, Stream: sig.Stream, UserID: sig.UserID, Label: sig.Label, SDP: sig.SDP}
			if sig.Candidate != nil {
				out.Candidate, _ = json.Marshal(sig.Candidate)
			}
			send(conn, out)
		}, func(e sfu.Event) {
			switch e.Kind {
			case "ended":
				ended(e.Stream)
			case "speaking":
				m.mu.Lock()
				f := m.speaking
				m.mu.Unlock()
				f(e.Stream, e.Speaking)
			}
		})
		return m
	}
}

// sfuMedia adapts an sfu.Room to the room service's Media.
type sfuMedia struct {
	r *sfu.Room

	mu       sync.Mutex
	speaking func(streamID string, on bool)
}

// OnSpeaking implements room.SpeakingMedia.
func (m *sfuMedia) OnSpeaking(f func(streamID string, on bool)) {
	m.mu.Lock()
	m.speaking = f
	m.mu.Unlock()
}

func (m *sfuMedia) AddConn(conn, userID string, receive bool) { m.r.AddConn(conn, userID, receive) }
func (m *sfuMedia) RemoveConn(conn string)                    { m.r.RemoveConn(conn) }
func (m *sfuMedia) CloseStream(id string)                     { m.r.CloseStream(id) }
func (m *sfuMedia) Close()                                    { m.r.Close() }

func (m *sfuMedia) Publish(conn, clientStream, label, sdp string) (string, error) {
	return m.r.Publish(conn, clientStream, label, sdp)
}

// Signal passes a client's signal on. A null candidate (a browser's end
// of gathering) needs no forwarding, and a signal for a stream that has
// just ended (a close crossed it) is dropped quietly.
func (m *sfuMedia) Signal(conn string, sig room.Signal) error {
	out := sfu.Signal{Kind: sig.Kind, Stream: sig.Stream, SDP: sig.SDP}
	if sig.Kind == "ice" {
		if len(sig.Candidate) == 0 || string(sig.Candidate) == "null" {
			return nil
		}
		var c webrtc.ICECandidateInit
		if err := json.Unmarshal(sig.Candidate, &c); err != nil {
			return errBadCandidate
		}
		out.Candidate = &c
	}
	err := m.r.Signal(conn, out)
	if errors.Is(err, sfu.ErrUnknownStream) {
		return nil
	}
	return err
}

type candidateError struct{}

func (candidateError) Error() string { return "candidate must be an RTCIceCandidateInit object." }

var errBadCandidate error = candidateError{}
