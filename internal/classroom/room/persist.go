package room

import (
	"context"
	"errors"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// A room keeps in the store what its next owner needs to open it as it
// was, should this node die (or restart) mid-class: chat, board, files
// and removals (elsewhere), raised hands and the teacher's permissions
// (here), the room-wide switches and whether the sitting is recorded (in
// the sitting). Every write carries the room's lease (fence): once another
// node took the room over, this node's late writes are refused.

// fence is the lease this node holds the room under (zero on a single
// node).
func (r *Room) fence() store.Fence {
	if r.hub.Fence == nil {
		return store.Fence{}
	}
	return r.hub.Fence(r.key)
}

// loadUsers reads the kept users, the switches and the recording state,
// at the room's opening.
func (r *Room) loadUsers(ctx context.Context) error {
	users, err := r.hub.Store.RoomUsers(ctx, r.key.Domain, r.key.Class, r.key.Sitting)
	if err != nil {
		return err
	}
	r.saved = make(map[string]lms.RoomUser, len(users))
	for _, u := range users {
		r.saved[u.UserRef] = u
	}
	r.drawAll, r.filesAll = r.sitting.DrawAll, r.sitting.FilesAll
	// The sitting was recorded (or stopped by the teacher) under an
	// earlier owner: automatic recording does not start it again, and a
	// recording that was on goes on in a new segment (resumeRecording).
	r.autoStarted = r.sitting.Recording != lms.SittingNotRecorded
	return nil
}

// restoreUser gives a user joining for the first time on this node what
// the store kept of them: the teacher's permissions, and the hand, in its
// place among the raised hands.
func (r *Room) restoreUser(u *user) {
	s, ok := r.saved[u.id]
	if !ok {
		return
	}
	delete(r.saved, u.id)
	u.media, u.screen, u.draw, u.files = s.Media, s.Screen, s.Draw, s.Files
	if s.HandAt.IsZero() {
		return
	}
	u.hand, u.handAt = true, s.HandAt
	at := len(r.hands)
	for i, id := range r.hands {
		if o := r.users[id]; o != nil && o.handAt.After(s.HandAt) {
			at = i
			break
		}
	}
	r.hands = append(r.hands[:at], append([]string{u.id}, r.hands[at:]...)...)
	r.broadcast(eventMsg{Kind: "hands", Hands: r.handList()}, nil, nil)
}

// saveUser writes a user's hand and permissions; a failure is logged.
func (r *Room) saveUser(u *user) {
	ru := lms.RoomUser{UserRef: u.id, Media: u.media, Screen: u.screen, Draw: u.draw, Files: u.files}
	if u.hand {
		ru.HandAt = u.handAt
	}
	err := r.hub.Store.SaveRoomUser(context.Background(), r.fence(), r.key.Domain, r.key.Class, r.key.Sitting, ru)
	r.logWrite("save a user's hand and permissions", err)
}

// logWrite logs a failed write of the room's state; a write refused by the
// fence is a warning (this node lost the room; it closes it at its next
// heartbeat).
func (r *Room) logWrite(what string, err error) {
	switch {
	case err == nil:
	case errors.Is(err, store.ErrFenced):
		r.hub.logger().Warn(what+": refused, another node took the room over", "class", r.key.Class, "sitting", r.key.Sitting)
	default:
		r.hub.logger().Error(what, "class", r.key.Class, "sitting", r.key.Sitting, "err", err)
	}
}

// setRecordingState keeps whether the sitting is recorded, for the room's
// next owner.
func (r *Room) setRecordingState(state int) {
	if r.sitting.Recording == state {
		return
	}
	r.sitting.Recording = state
	r.saveSitting()
}

// resumeRecording starts a new segment of a recording an earlier owner of
// the room was making, once the room is open here.
func (r *Room) resumeRecording() {
	if r.sitting.Recording == lms.SittingRecording && !r.recording && r.recordSetting() != RecordOff {
		r.startRecording()
		if !r.recording {
			// It could not start (the teachers were told): not again
			// at every join.
			r.setRecordingState(lms.SittingPaused)
		}
	}
}
