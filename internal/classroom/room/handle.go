package room

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/internal/lms"
)

// handle runs one client message on the room goroutine.
func (r *Room) handle(c *Conn, m clientMsg) {
	u := r.users[c.user]
	fail := func(code, msg string) {
		r.sendTo(c, errorMsg{Type: "error", Ref: m.Ref, Code: code, Message: msg})
	}
	switch m.Type {
	case "ping":
		r.sendTo(c, map[string]string{"type": "pong"})
	case "chat":
		r.chatMsg(c, u, m, fail)
	case "hand":
		if u.teacher {
			fail(ErrForbidden, "Teachers do not raise hands.")
			return
		}
		r.setHand(u, m.Up)
	case "quality":
		r.quality(u, m)
	case "moderate":
		if !r.can(u, permOp) {
			fail(ErrForbidden, "Only the teacher can do this.")
			return
		}
		r.moderate(c, u, m, fail)
	case "room":
		if !r.can(u, permOp) {
			fail(ErrForbidden, "Only the teacher can do this.")
			return
		}
		r.roomAction(c, m, fail)
	case "rtc":
		r.rtc(c, u, m, fail)
	case "board":
		var b boardMsg
		if err := json.Unmarshal(m.raw, &b); err != nil {
			fail(ErrInvalid, "The board message does not have the documented fields.")
			return
		}
		r.boardOp(c, u, b, fail)
	case "presentation":
		if !r.can(u, permOp) {
			fail(ErrForbidden, "Only the teacher controls the presentation.")
			return
		}
		var p presentationMsg
		if err := json.Unmarshal(m.raw, &p); err != nil {
			fail(ErrInvalid, "The presentation message does not have the documented fields.")
			return
		}
		r.present(p, fail)
	case "quiz":
		r.quizOp(c, u, m, fail)
	default:
		fail(ErrInvalid, "Unknown message type.")
	}
}

func (r *Room) chatMsg(c *Conn, u *user, m clientMsg, fail func(code, msg string)) {
	text := strings.TrimSpace(m.Text)
	switch {
	case text == "":
		fail(ErrInvalid, "The message is empty.")
		return
	case !utf8.ValidString(text):
		fail(ErrInvalid, "The message is not valid text.")
		return
	case utf8.RuneCountInString(text) > MaxChatRunes:
		fail(ErrTooLong, "Messages are limited to 2000 characters.")
		return
	}
	var to *user
	if m.To != "" {
		to = r.users[m.To]
		if to == nil || len(to.conns) == 0 {
			fail(ErrNotFound, "That person is not in the class.")
			return
		}
		if to == u {
			fail(ErrInvalid, "You cannot send a private message to yourself.")
			return
		}
	}
	if ok, why := r.chatAllowed(u, to); !ok {
		fail(ErrForbidden, why)
		return
	}
	now := r.now()
	u.chatTimes = slices.DeleteFunc(u.chatTimes, func(t time.Time) bool { return now.Sub(t) >= ChatWindow })
	if len(u.chatTimes) >= ChatBurst {
		fail(ErrRateLimited, "You are sending messages too fast. Wait a few seconds.")
		return
	}
	u.chatTimes = append(u.chatTimes, now)
	msg := lms.ChatMessage{ClassID: r.key.Class, OccurrenceSeq: r.key.Sitting, From: u.id, FromName: u.name,
		To: m.To, Text: text, At: now.Truncate(time.Second)}
	stored, err := r.hub.Store.AddRoomChat(context.Background(), r.key.Domain, msg)
	if err != nil {
		r.hub.logger().Error("store chat", "class", r.key.Class, "err", err)
		fail(ErrInvalid, "The message could not be sent. Try again.")
		return
	}
	w := wireChat(stored)
	r.chat = append(r.chat, w)
	if len(r.chat) > ChatHistory {
		r.chat = slices.Delete(r.chat, 0, len(r.chat)-ChatHistory)
	}
	var audience []string
	if to != nil {
		audience = []string{u.id, to.id}
	}
	r.broadcast(eventMsg{Kind: "chat", Message: &w}, audience, nil)
}

func (r *Room) setHand(u *user, up bool) {
	if u.hand == up {
		return
	}
	u.hand = up
	if up {
		r.hands = append(r.hands, u.id)
		u.handAt = r.now()
	} else {
		r.hands = slices.DeleteFunc(r.hands, func(id string) bool { return id == u.id })
	}
	r.saveUser(u)
	r.changed(u, nil)
	r.broadcast(eventMsg{Kind: "hands", Hands: r.handList()}, nil, nil)
}

// quality grades a client's report: good under 150 ms and 2% loss, fair
// under 400 ms and 8%, poor above.
func (r *Room) quality(u *user, m clientMsg) {
	q := "poor"
	switch {
	case m.RTT < 0 || m.Loss < 0:
		return
	case m.RTT < 150 && m.Loss < 0.02:
		q = "good"
	case m.RTT < 400 && m.Loss < 0.08:
		q = "fair"
	}
	if u.quality != q {
		u.quality = q
		r.changed(u, nil)
	}
}

func (r *Room) moderate(c *Conn, teacher *user, m clientMsg, fail func(code, msg string)) {
	u := r.users[m.UserID]
	if u == nil || len(u.conns) == 0 {
		fail(ErrNotFound, "That person is not in the class.")
		return
	}
	yes, no := true, false
	switch m.Action {
	case "mute":
		r.closeStreams(u, LabelMic)
		r.tell(u, "muted", teacher.id)
	case "stop-video":
		r.closeStreams(u, LabelCamera)
		r.tell(u, "camera-stopped", teacher.id)
	case "allow-media":
		u.media = &yes
		r.setHand(u, false) // the hand asked for this
		r.tell(u, "media-allowed", teacher.id)
	case "revoke-media":
		u.media = &no
		r.closeStreams(u, LabelMic, LabelCamera)
		r.tell(u, "media-revoked", teacher.id)
	case "allow-screen":
		u.screen = &yes
		r.tell(u, "screen-allowed", teacher.id)
	case "revoke-screen":
		u.screen = &no
		r.closeStreams(u, LabelScreen)
		r.tell(u, "screen-revoked", teacher.id)
	case "allow-draw":
		u.draw = &yes
		r.tell(u, "draw-allowed", teacher.id)
	case "revoke-draw":
		u.draw = &no
		r.tell(u, "draw-revoked", teacher.id)
	case "allow-files":
		u.files = &yes
		r.tell(u, "files-allowed", teacher.id)
	case "revoke-files":
		u.files = &no
		r.tell(u, "files-revoked", teacher.id)
	case "lower-hand":
		r.setHand(u, false)
		return
	case "remove":
		if u.teacher {
			fail(ErrForbidden, "A teacher cannot be removed.")
			return
		}
		r.removed[u.id] = true
		if err := r.hub.Store.AddRoomRemoval(context.Background(), r.key.Domain, r.key.Class, r.key.Sitting, u.id, r.now()); err != nil {
			r.hub.logger().Error("store removal", "class", r.key.Class, "err", err)
		}
		r.tell(u, "removed", teacher.id)
		for _, uc := range u.conns {
			r.detach(uc, FailRemoved)
		}
		return
	default:
		fail(ErrInvalid, "Unknown moderation action.")
		return
	}
	if strings.HasPrefix(m.Action, "allow-") || strings.HasPrefix(m.Action, "revoke-") {
		r.saveUser(u)
	}
	r.changed(u, nil)
}

func (r *Room) roomAction(c *Conn, m clientMsg, fail func(code, msg string)) {
	switch m.Action {
	case "mute-all":
		for _, u := range r.users {
			if !u.teacher && len(u.conns) > 0 && r.closeStreams(u, LabelMic) {
				r.tell(u, "muted", c.user)
				r.changed(u, nil)
			}
		}
	case "extend":
		if c.extend != 0 {
			fail(ErrForbidden, "This class cannot be extended.")
			return
		}
		if r.sitting.ExtendedMinutes+int(ExtendStep/time.Minute) > int(MaxExtension/time.Minute) {
			fail(ErrForbidden, "This class has been extended as far as it can be.")
			return
		}
		r.sitting.ExtendedMinutes += int(ExtendStep / time.Minute)
		end := r.computeEnd()
		if !end.After(r.endsAt) {
			r.sitting.ExtendedMinutes -= int(ExtendStep / time.Minute)
			fail(ErrForbidden, "Your plan limits how long a session lasts; it cannot be extended.")
			return
		}
		if err := r.hub.Store.SaveFencedSitting(context.Background(), r.key.Domain, r.fence(), r.sitting); err != nil {
			r.sitting.ExtendedMinutes -= int(ExtendStep / time.Minute)
			r.hub.logger().Error("extend sitting", "class", r.key.Class, "err", err)
			fail(ErrInvalid, "The class could not be extended. Try again.")
			return
		}
		r.endsAt = end
		r.broadcast(eventMsg{Kind: "timer", EndsAt: &end}, nil, nil)
	case "end":
		r.end("teacher")
	case "record", "unrecord":
		r.recordAction(c, m.Action == "record", fail)
	case "allow-draw-all", "revoke-draw-all", "allow-files-all", "revoke-files-all":
		on := strings.HasPrefix(m.Action, "allow")
		key := "draw-"
		if strings.Contains(m.Action, "files") {
			r.filesAll, key = on, "files-"
		} else {
			r.drawAll = on
		}
		if on {
			key += "allowed"
		} else {
			key += "revoked"
		}
		draw, files := r.drawAll, r.filesAll
		r.sitting.DrawAll, r.sitting.FilesAll = draw, files
		r.saveSitting()
		r.broadcast(eventMsg{Kind: "switches", DrawAll: &draw, FilesAll: &files}, nil, nil)
		for _, u := range r.users {
			if !u.teacher && len(u.conns) > 0 {
				// The room-wide switch replaces earlier one-by-one choices.
				if key[0] == 'd' {
					u.draw = nil
				} else {
					u.files = nil
				}
				r.saveUser(u)
				r.tell(u, key, c.user)
				r.changed(u, nil)
			}
		}
	default:
		fail(ErrInvalid, "Unknown room action.")
	}
}

// closeStreams ends u's streams with the given labels and reports whether
// there were any.
func (r *Room) closeStreams(u *user, labels ...string) bool {
	any := false
	for _, s := range r.sortedStreams() {
		if s.user == u.id && slices.Contains(labels, s.label) {
			any = true
			delete(r.streams, s.id)
			if r.media != nil {
				r.media.CloseStream(s.id)
			}
			r.broadcast(eventMsg{Kind: "unstream", ID: s.id}, nil, nil)
		}
	}
	return any
}

var streamID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (r *Room) rtc(c *Conn, u *user, m clientMsg, fail func(code, msg string)) {
	if r.media == nil {
		fail(ErrForbidden, "This class has no audio or video.")
		return
	}
	if !streamID.MatchString(m.Stream) {
		fail(ErrInvalid, "stream must be 1-64 letters, digits, '-' or '_'.")
		return
	}
	refuse := func(code, msg string) {
		fail(code, msg)
		r.sendTo(c, rtcMsg{Type: "rtc", Signal: Signal{Kind: "close", Stream: m.Stream}})
	}
	switch m.Kind {
	case "offer":
		perm := labelPerm(m.Label)
		if perm == "" {
			refuse(ErrInvalid, "label must be camera, mic, screen or recording.")
			return
		}
		if !r.can(u, perm) {
			refuse(ErrForbidden, publishRefusal(r, m.Label))
			return
		}
		id, err := r.media.Publish(c.id, m.Stream, m.Label, m.SDP)
		if err != nil {
			refuse(ErrInvalid, err.Error())
			return
		}
		r.streams[id] = &stream{id: id, conn: c.id, user: u.id, label: m.Label, clientID: m.Stream}
		r.broadcast(eventMsg{Kind: "stream", Stream: &StreamInfo{ID: id, UserID: u.id, Label: m.Label}}, nil, nil)
		r.changed(u, nil)
	case "close":
		for _, s := range r.streams {
			if s.conn == c.id && s.clientID == m.Stream {
				delete(r.streams, s.id)
				r.broadcast(eventMsg{Kind: "unstream", ID: s.id}, nil, nil)
				r.changed(u, nil)
			}
		}
		fallthrough
	case "answer", "ice":
		sig := Signal{Kind: m.Kind, Stream: m.Stream, SDP: m.SDP, Candidate: m.Candidate}
		if err := r.media.Signal(c.id, sig); err != nil && m.Kind != "close" {
			fail(ErrInvalid, err.Error())
		}
	default:
		fail(ErrInvalid, "kind must be offer, answer, ice or close.")
	}
}

func publishRefusal(r *Room, label string) string {
	switch {
	case r.class.IsBoard != 0:
		return "This class has no audio or video."
	case label == LabelRecording:
		return "Only the teacher publishes the recording's tab, in a class recorded as the whole tab (isRecordingLayout 1)."
	case label == LabelScreen && r.class.IsScreenshare != 1:
		return "Screen sharing is off in this class."
	case label == LabelScreen:
		return "The teacher has not allowed you to share your screen."
	}
	return "Raise your hand: the teacher has not allowed your camera and microphone."
}

// mediaSend delivers a media engine's signal to a connection.
func (r *Room) mediaSend(conn string, sig Signal) {
	r.q.post(func() {
		if c := r.conns[conn]; c != nil {
			r.sendTo(c, rtcMsg{Type: "rtc", Signal: sig})
		}
	})
}

// mediaSpeaking notes that a stream's sound started or stopped being
// voice, and tells everyone when that changes whether its user speaks.
func (r *Room) mediaSpeaking(id string, on bool) {
	r.q.post(func() {
		s := r.streams[id]
		if s == nil || s.speaking == on {
			return
		}
		u := r.users[s.user]
		if u == nil {
			return
		}
		was := r.participant(u).Speaking
		s.speaking = on
		if now := r.participant(u).Speaking; now != was {
			r.broadcast(eventMsg{Kind: "speaking", UserID: u.id, Speaking: &now}, nil, nil)
		}
	})
}

// mediaEnded forgets a stream whose publisher went away on its own.
func (r *Room) mediaEnded(id string) {
	r.q.post(func() {
		s := r.streams[id]
		if s == nil {
			return
		}
		delete(r.streams, id)
		r.broadcast(eventMsg{Kind: "unstream", ID: id}, nil, nil)
		if u := r.users[s.user]; u != nil {
			r.changed(u, nil)
		}
	})
}
