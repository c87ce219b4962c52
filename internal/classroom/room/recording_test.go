package room_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/lms"
)

// fakeRecorder records what the room asks of a recorder.
type fakeRecorder struct {
	mu      sync.Mutex
	calls   []string
	events  []string
	onError func(error)
}

func (f *fakeRecorder) log(s string) { f.mu.Lock(); f.calls = append(f.calls, s); f.mu.Unlock() }
func (f *fakeRecorder) Start() error { f.log("start"); return nil }
func (f *fakeRecorder) Pause()       { f.log("pause") }
func (f *fakeRecorder) Stop()        { f.log("stop") }
func (f *fakeRecorder) Event(kind string, data json.RawMessage) {
	f.mu.Lock()
	f.events = append(f.events, kind+" "+string(data))
	f.mu.Unlock()
}
func (f *fakeRecorder) get() ([]string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls), slices.Clone(f.events)
}

func TestRecordModes(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		recs := map[int64]*fakeRecorder{} // by class
		e.hub.Recorder = func(k room.Key, c lms.LiveClass, m room.Media, onError func(error)) (room.Recorder, error) {
			mu.Lock()
			defer mu.Unlock()
			recs[c.ID] = &fakeRecorder{onError: onError}
			return recs[c.ID], nil
		}
		calls := func(c lms.LiveClass) []string {
			mu.Lock()
			rec := recs[c.ID]
			mu.Unlock()
			if rec == nil {
				return nil
			}
			calls, _ := rec.get()
			return calls
		}
		record := func(set int) lms.LiveClass { return e.class(func(c *lms.LiveClass) { c.Record = set }) }

		for _, tc := range []struct {
			mode       int
			plan       string
			permission bool
			auto       bool
		}{
			{0, "", false, false}, {1, "", true, false}, {2, "", true, true}, {3, "", false, true},
			{2, "free", false, false}, {3, "free", false, false},
		} {
			e.clock.Set(start.Add(-10 * 60e9)) // the teacher prepares the room early
			c := record(tc.mode)
			teacher := e.mustJoin(c, "t", joinOpts{teacher: true, plan: tc.plan})
			if got := slices.Contains(teacher.perms(), "record"); got != tc.permission {
				t.Errorf("mode %d plan %q: record permission %v", tc.mode, tc.plan, got)
			}
			e.hub.CheckTimers()
			if got := calls(c); len(got) != 0 {
				t.Errorf("mode %d: recording before the sitting started: %v", tc.mode, got)
			}
			e.clock.Set(start)
			e.hub.CheckTimers()
			if started := slices.Contains(calls(c), "start"); started != tc.auto {
				t.Errorf("mode %d plan %q: started by itself %v", tc.mode, tc.plan, started)
			}
			if tc.auto {
				if ev := teacher.next("event", "recording"); ev["recording"] != true {
					t.Errorf("mode %d: %v", tc.mode, ev)
				}
			}
			teacher.send(map[string]any{"type": "room", "action": "unrecord"})
			if tc.mode == 3 && tc.plan == "" {
				if er := teacher.next("error", ""); !strings.Contains(er["message"].(string), "cannot be started or stopped") {
					t.Errorf("mode 3 stop: %v", er)
				}
			}
			teacher.conn.Handle([]byte(`{"type":"room","action":"end"}`))
			teacher.closed()
		}
	})
}

func TestRecordingLog(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		rec := &fakeRecorder{}
		e.hub.Recorder = func(k room.Key, c lms.LiveClass, m room.Media, onError func(error)) (room.Recorder, error) {
			rec.onError = onError
			return rec, nil
		}
		e.clock.Set(start)
		c := e.class(func(c *lms.LiveClass) { c.Record = 1 })
		teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
		student := e.mustJoin(c, "s", joinOpts{})
		student.send(map[string]any{"type": "chat", "text": "before"})
		teacher.send(map[string]any{"type": "room", "action": "record"})
		if ev := student.next("event", "recording"); ev["recording"] != true {
			t.Fatalf("everyone sees recording is on: %v", ev)
		}
		student.send(map[string]any{"type": "chat", "text": "public"})
		student.send(map[string]any{"type": "chat", "text": "secret", "to": "t"})
		teacher.send(map[string]any{"type": "board", "op": "add", "object": stroke("k1", "p1", 1, 1, 9, 9)})
		teacher.send(map[string]any{"type": "room", "action": "unrecord"})
		if ev := student.next("event", "recording"); ev["recording"] != false || ev["reason"] != "teacher" {
			t.Fatalf("%v", ev)
		}
		student.send(map[string]any{"type": "chat", "text": "after"})
		_, events := rec.get()
		all := strings.Join(events, "\n")
		for _, want := range []string{"public", `"op":"add"`, "recording", `snapshot {"participants":[{"userId":"t"`} {
			if !strings.Contains(all, want) {
				t.Errorf("event log lacks %s:\n%s", want, all)
			}
		}
		for _, never := range []string{"before", "secret", "after"} { // chat while paused is not recorded
			if strings.Contains(all, never) {
				t.Errorf("event log has %s:\n%s", never, all)
			}
		}
		// A failing recorder stops recording; the teacher hears of it; the class goes on.
		teacher.send(map[string]any{"type": "room", "action": "record"})
		rec.onError(errors.New("disk full"))
		teacher.next("notice", "recording-failed")
		if ev := student.next("event", "recording"); ev["recording"] != true {
			t.Fatalf("%v", ev)
		}
		if ev := student.next("event", "recording"); ev["recording"] != false || ev["reason"] != "failed" {
			t.Fatalf("%v", ev)
		}
		student.send(map[string]any{"type": "chat", "text": "still here"})
		teacher.chat("still here")
		calls, _ := rec.get()
		if strings.Join(calls, ",") != "start,pause,start,pause,stop" {
			t.Fatalf("calls %v", calls)
		}
	})
}

func TestSpeaking(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		rec := &fakeRecorder{}
		e.hub.Recorder = func(k room.Key, c lms.LiveClass, m room.Media, onError func(error)) (room.Recorder, error) {
			return rec, nil
		}
		e.clock.Set(start)
		c := e.class(func(c *lms.LiveClass) { c.Record = 3; c.IsScreenshare = 1 })
		teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
		student := e.mustJoin(c, "s", joinOpts{})
		e.hub.CheckTimers()
		student.next("event", "recording")
		teacher.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "mic1", "label": "mic", "sdp": "v=0"})
		teacher.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "scr1", "label": "screen", "sdp": "v=0"})
		mic := student.next("event", "stream")["stream"].(map[string]any)["id"].(string)
		scr := student.next("event", "stream")["stream"].(map[string]any)["id"].(string)

		speaking := func(want bool) {
			t.Helper()
			ev := student.next("event", "speaking")
			if ev["userId"] != "t" || ev["speaking"] != want {
				t.Fatalf("speaking event %v, want t speaking %v", ev, want)
			}
		}
		e.media.speak(mic, true)
		speaking(true)
		// The screen's sound too: the teacher still speaks, no news; the
		// mic stops: still speaking (the screen); the screen stops: quiet.
		e.media.speak(scr, true)
		e.media.speak(mic, false)
		e.media.speak(scr, false)
		speaking(false)
		// A late joiner sees who speaks in the snapshot.
		e.media.speak(mic, true)
		speaking(true)
		late := e.mustJoin(c, "s2", joinOpts{})
		for _, p := range late.welcome["snapshot"].(map[string]any)["participants"].([]any) {
			if p := p.(map[string]any); p["userId"] == "t" && p["speaking"] != true {
				t.Errorf("snapshot: the teacher does not speak: %v", p)
			}
		}
		// A stream that ends while speaking ends the speaking.
		teacher.send(map[string]any{"type": "rtc", "kind": "close", "stream": "mic1"})
		if u := student.next("event", "update"); u["participant"].(map[string]any)["speaking"] != false {
			t.Fatalf("after the mic closed: %v", u)
		}
		// An unknown stream is ignored; so is a repeat.
		e.media.speak("s99", true)
		e.media.speak(scr, false)
		student.send(map[string]any{"type": "chat", "text": "marker"})
		student.chat("marker")
		for _, m := range student.buf {
			if m["kind"] == "speaking" {
				t.Errorf("a speaking event after an unknown stream and a repeat: %v", m)
			}
		}

		_, events := rec.get()
		var logged []string
		for _, ev := range events {
			if strings.HasPrefix(ev, "speaking ") {
				logged = append(logged, ev)
			}
		}
		if len(logged) != 3 || !strings.Contains(logged[0], `"userId":"t"`) || !strings.Contains(logged[0], `"speaking":true`) ||
			!strings.Contains(logged[1], `"speaking":false`) {
			t.Errorf("the recording's log has speaking lines %v", logged)
		}
		teacher.conn.Handle([]byte(`{"type":"room","action":"end"}`))
	})
}

// TestRecordingTab: with isRecordingLayout 1 the teacher (only) may
// publish the classroom tab as the "recording" stream, in any record mode
// that records.
func TestRecordingTab(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		e.hub.Recorder = func(k room.Key, c lms.LiveClass, m room.Media, onError func(error)) (room.Recorder, error) {
			return &fakeRecorder{}, nil
		}
		for _, tc := range []struct {
			layout, record int
			plan           string
			teacher        bool
		}{
			{1, 1, "", true}, {1, 2, "", true}, {1, 3, "", true},
			{0, 2, "", false}, {1, 0, "", false}, {1, 2, "free", false},
		} {
			c := e.class(func(c *lms.LiveClass) { c.IsRecordingLayout, c.Record, c.IsCorporate = tc.layout, tc.record, 1 })
			teacher := e.mustJoin(c, "t", joinOpts{teacher: true, plan: tc.plan})
			student := e.mustJoin(c, "s", joinOpts{plan: tc.plan})
			if got := slices.Contains(teacher.perms(), "record:tab"); got != tc.teacher {
				t.Errorf("layout %d record %d plan %q: the teacher's record:tab %v", tc.layout, tc.record, tc.plan, got)
			}
			if slices.Contains(student.perms(), "record:tab") {
				t.Errorf("layout %d record %d: a student has record:tab", tc.layout, tc.record)
			}
			teacher.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "tab1", "label": "recording", "sdp": "v=0"})
			if tc.teacher {
				teacher.next("rtc", "answer")
			} else if er := teacher.next("error", ""); er["code"] != "forbidden" || !strings.Contains(er["message"].(string), "isRecordingLayout") {
				t.Errorf("layout %d record %d: %v", tc.layout, tc.record, er)
			}
			student.send(map[string]any{"type": "rtc", "kind": "offer", "stream": "tab2", "label": "recording", "sdp": "v=0"})
			if er := student.next("error", ""); er["code"] != "forbidden" {
				t.Errorf("layout %d record %d: a student's tab: %v", tc.layout, tc.record, er)
			}
			teacher.conn.Handle([]byte(`{"type":"room","action":"end"}`))
		}
	})
}
