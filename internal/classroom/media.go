package classroom

import (
	"encoding/json"
	"errors"

	"github.com/pion/webrtc/v4"

	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/classroom/sfu"
)

// SFUMedia makes rooms' media engines on s.
func SFUMedia(s *sfu.SFU) room.MediaFactory {
	return func(send func(string, room.Signal), ended func(string)) room.Media {
		m := &sfuMedia{}
		m.r = s.NewRoom(func(conn string, sig sfu.Signal) {
			out := room.Signal{Kind: sig.Kind, Stream: sig.Stream, UserID: sig.UserID, Label: sig.Label, SDP: sig.SDP}
			if sig.Candidate != nil {
				out.Candidate, _ = json.Marshal(sig.Candidate)
			}
			send(conn, out)
		}, func(e sfu.Event) {
			if e.Kind == "ended" {
				ended(e.Stream)
			}
		})
		return m
	}
}

// sfuMedia adapts an sfu.Room to the room service's Media.
type sfuMedia struct{ r *sfu.Room }

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
