package room

import (
	"encoding/json"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Recorder captures a sitting: every published stream and the room's
// event log. The room calls it from its goroutine; it must not block.
type Recorder interface {
	// Start begins a segment (the first one starts the recording).
	Start() error
	// Pause ends the current segment.
	Pause()
	// Event appends a line to the recording's event log.
	Event(kind string, data json.RawMessage)
	// Stop ends the recording for good; its files are finished in the
	// background.
	Stop()
}

// RecorderFactory makes the recorder of a sitting's room. media is the
// room's media engine (nil when the class has no media); onError is
// called, from any goroutine, when recording fails (a full disk): the
// room stops recording and tells the teacher, the class goes on.
type RecorderFactory func(k Key, c lms.LiveClass, media Media, onError func(error)) (Recorder, error)

// permRecord lets the teacher start and stop recording.
const permRecord = "record"

// Record modes (the class's record setting, 0 on a plan without
// recording).
const (
	RecordOff    = 0 // never
	RecordManual = 1 // the teacher starts and stops it
	RecordAuto   = 2 // starts with the sitting; the teacher may stop and restart
	RecordLocked = 3 // starts with the sitting; nobody stops it
)

// recordAction runs the teacher's record and unrecord.
func (r *Room) recordAction(c *Conn, on bool, fail func(code, msg string)) {
	u := r.users[c.user]
	switch {
	case r.recordSetting() == RecordLocked:
		fail(ErrForbidden, "Recording is automatic in this class and cannot be started or stopped.")
		return
	case !r.can(u, permRecord):
		fail(ErrForbidden, "Recording is off for this class.")
		return
	}
	if on {
		r.startRecording()
	} else {
		r.pauseRecording("teacher")
	}
}

// startRecording starts (or resumes) recording and tells everyone.
func (r *Room) startRecording() {
	if r.recording || r.hub.Recorder == nil {
		return
	}
	if r.recorder == nil {
		rec, err := r.hub.Recorder(r.key, r.class, r.media, func(err error) {
			r.q.post(func() { r.recordFailed(err) })
		})
		if err != nil {
			r.hub.logger().Error("start recording", "class", r.key.Class, "err", err)
			r.tellTeachers("recording-failed")
			return
		}
		r.recorder = rec
	}
	if err := r.recorder.Start(); err != nil {
		r.hub.logger().Error("start recording segment", "class", r.key.Class, "err", err)
		r.tellTeachers("recording-failed")
		return
	}
	// The log starts with the room as it is (the chat before it was not
	// recorded), so a replay need not begin from an empty board.
	snap := r.snapshot(&user{})
	snap.Chat = []ChatMessage{}
	if b, err := json.Marshal(snap); err == nil {
		r.recorder.Event("snapshot", b)
	}
	r.recording = true
	r.setRecordingState(lms.SittingRecording)
	r.broadcast(eventMsg{Kind: "recording", Recording: &r.recording}, nil, nil)
}

// pauseRecording ends the current segment.
func (r *Room) pauseRecording(reason string) {
	if !r.recording {
		return
	}
	off := false
	r.broadcast(eventMsg{Kind: "recording", Recording: &off, Reason: reason}, nil, nil)
	r.recording = false
	r.recorder.Pause()
	if reason == "teacher" || reason == "failed" {
		// Not when the room closes here to open on another node: the
		// recording goes on there.
		r.setRecordingState(lms.SittingPaused)
	}
}

// stopRecording ends the recording with the room.
func (r *Room) stopRecording() {
	r.pauseRecording("ended")
	if r.recorder != nil {
		r.recorder.Stop()
		r.recorder = nil
	}
}

// recordFailed stops a recording that can no longer write.
func (r *Room) recordFailed(err error) {
	r.hub.logger().Error("recording failed", "class", r.key.Class, "sitting", r.key.Sitting, "err", err)
	if r.recorder == nil {
		return
	}
	r.pauseRecording("failed")
	r.recorder.Stop()
	r.recorder = nil
	r.tellTeachers("recording-failed")
}

func (r *Room) tellTeachers(key string) {
	for _, u := range r.users {
		if u.teacher {
			r.tell(u, key, "")
		}
	}
}

// autoRecord starts recording by itself once the sitting has started, for
// record modes 2 and 3 (once: after the teacher stops it in mode 2, it
// stays stopped until restarted).
func (r *Room) autoRecord(now time.Time) {
	mode := r.recordSetting()
	if r.autoStarted || (mode != RecordAuto && mode != RecordLocked) || now.Before(r.occ.Start) {
		return
	}
	r.autoStarted = true
	r.startRecording()
}

// logEvent copies an event everyone sees into the recording's event log.
// While recording is paused the log keeps what rebuilds the room's state
// (board, slides, presence) but not the chat, which was not recorded.
func (r *Room) logEvent(ev eventMsg, data []byte) {
	if r.recorder != nil && (r.recording || ev.Kind != "chat") {
		r.recorder.Event(ev.Kind, data)
	}
}
