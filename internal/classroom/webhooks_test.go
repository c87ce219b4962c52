package classroom_test

import (
	"context"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
)

// A class's room raises its events to the domain's webhook endpoints,
// signed: class.started when the teacher opens it through the launch
// URL, participant.joined and participant.left as people come and go,
// class.ended when the teacher ends it, and recording.ready when its
// recording is finished.
func TestRoomWebhookEvents(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		rc := apitest.NewReceiver(t)
		_, secret := e.Hook(t, rc.URL(), "class.started", "class.ended", "participant.joined", "participant.left", "recording.ready")
		c, err := e.Store.CreateLiveClass(context.Background(), e.Domain.ID, lms.LiveClass{Title: "Hooks", Date: "2031-03-10",
			StartMinute: 900, EndMinute: 960, TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd", Published: 1,
			IsBoard: 1, Record: 1, Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		id := itoa(c.ID)
		e.Clock.Set(start) // in the future: see apitest.FutureTime
		teacher, _ := dial(t, e, map[string]any{"type": "hello", "protocol": 1, "session": session(t, e, id, "t1", "1", true)})
		student, _ := dial(t, e, map[string]any{"type": "hello", "protocol": 1, "session": session(t, e, id, "s1", "0", false)})
		teacher.until("event", "join")
		teacher.send(map[string]any{"type": "room", "action": "record"})
		teacher.until("event", "recording")
		teacher.send(map[string]any{"type": "board", "op": "add", "object": map[string]any{"id": "s1", "page": "p1", "tool": "pen",
			"color": "#000000", "width": 3, "points": []int{1, 2, 3, 4}}})
		teacher.until("event", "board")
		student.ws.CloseNow()
		e.WaitForWebhooks(t, "the student's leave", func() bool { return countType(t, rc, "participant.left") == 1 })
		teacher.send(map[string]any{"type": "room", "action": "end"})

		got := e.Delivered(t, rc, secret, "class.started", "class.ended", "recording.ready")
		e.WaitForWebhooks(t, "the teacher's leave", func() bool { return countType(t, rc, "participant.left") == 2 })
		if n := countType(t, rc, "participant.joined"); n != 2 {
			t.Errorf("%d participant.joined, want 2", n)
		}
		opened := start.Format(time.RFC3339)
		for typ, want := range map[string]map[string]any{
			"class.started":   {"data.class_id": c.ID, "data.opened_at": opened, "data.ended_at": apitest.Absent, "domain_id": e.Domain.ID},
			"class.ended":     {"data.class_id": c.ID, "data.opened_at": opened, "data.ended_at": opened},
			"recording.ready": {"data.class_id": c.ID},
		} {
			for path, w := range want {
				if v, ok := apitest.Lookup(got[typ], path); w == apitest.Absent && ok || w != apitest.Absent && !apitest.Equal(v, w) {
					t.Errorf("%s: %s = %v, want %v", typ, path, v, w)
				}
			}
		}
		sitting := apitest.Int(t, got["class.started"], "data.sitting")
		if apitest.Int(t, got["class.ended"], "data.sitting") != sitting || apitest.Int(t, got["recording.ready"], "data.sitting") != sitting {
			t.Errorf("sittings differ: %v", got)
		}
		// A board-only recording's main file is its event log.
		if apitest.Int(t, got["recording.ready"], "data.id") == 0 || apitest.Str(t, got["recording.ready"], "data.name") != "part1-events.jsonl" {
			t.Errorf("recording.ready: %v", got["recording.ready"])
		}

		people := map[string]map[string]any{}
		for _, d := range rc.Deliveries() {
			if err := apitest.VerifyWebhook(secret, d); err != nil {
				t.Error(err)
			}
			p := apitest.WebhookPayload(t, d)
			if typ := apitest.Str(t, p, "type"); typ == "participant.joined" || typ == "participant.left" {
				people[typ+" "+apitest.Str(t, p, "data.user_id")] = p
			}
		}
		for _, k := range []string{"participant.joined t1", "participant.joined s1", "participant.left s1", "participant.left t1"} {
			p, ok := people[k]
			if !ok {
				t.Errorf("no %s", k)
				continue
			}
			teacher := k[len(k)-2:] == "t1"
			for path, w := range map[string]any{"data.class_id": c.ID, "data.sitting": sitting, "data.is_teacher": teacher,
				"data.name": "User " + k[len(k)-2:], "data.at": opened} {
				if v, _ := apitest.Lookup(p, path); !apitest.Equal(v, w) {
					t.Errorf("%s: %s = %v, want %v", k, path, v, w)
				}
			}
		}
	}, apitest.AllowPrivateWebhooks)
}

// countType counts rc's deliveries of event type typ.
func countType(t *testing.T, rc *apitest.Receiver, typ string) int {
	n := 0
	for _, d := range rc.Deliveries() {
		if apitest.Str(t, apitest.WebhookPayload(t, d), "type") == typ {
			n++
		}
	}
	return n
}
