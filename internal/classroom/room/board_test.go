package room_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/signing"
)

func stroke(id, page string, pts ...int) map[string]any {
	return map[string]any{"id": id, "page": page, "tool": "pen", "color": "#112233", "width": 3, "points": pts}
}

// objects returns a page's objects from a welcome snapshot, by id.
func boardPage(t *testing.T, w map[string]any, page string) []map[string]any {
	t.Helper()
	b := w["snapshot"].(map[string]any)["board"].(map[string]any)
	for _, p := range b["pages"].([]any) {
		pm := p.(map[string]any)
		if pm["id"] == page {
			var out []map[string]any
			for _, o := range pm["objects"].([]any) {
				out = append(out, o.(map[string]any))
			}
			return out
		}
	}
	return nil
}

func ids(objs []map[string]any) string {
	var out []string
	for _, o := range objs {
		out = append(out, o["id"].(string))
	}
	return strings.Join(out, ",")
}

func TestBoard(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		e.clock.Set(start)
		c := e.class(func(c *lms.LiveClass) { c.IsBoard = 1 }) // the board is there in every layout
		teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
		a := e.mustJoin(c, "a", joinOpts{})
		b := e.mustJoin(c, "b", joinOpts{})

		t.Run("students draw only when allowed", func(t *testing.T) {
			a.send(map[string]any{"type": "board", "op": "add", "object": stroke("a1", "p1", 1, 1, 2, 2)})
			if er := a.next("error", ""); er["code"] != "forbidden" {
				t.Fatalf("%v", er)
			}
			teacher.send(map[string]any{"type": "moderate", "action": "allow-draw", "userId": "a"})
			a.next("notice", "draw-allowed")
		})
		t.Run("operations are ordered and reach everyone", func(t *testing.T) {
			teacher.send(map[string]any{"type": "board", "op": "add", "object": stroke("t1", "p1", 10, 10, 20, 20, 30, 30)})
			a.send(map[string]any{"type": "board", "op": "add", "object": stroke("a1", "p1", 5, 5, 6, 6)})
			first := b.next("event", "board")
			second := b.next("event", "board")
			if first["object"].(map[string]any)["id"] != "t1" || second["object"].(map[string]any)["id"] != "a1" ||
				second["seq"].(float64) <= first["seq"].(float64) || second["object"].(map[string]any)["by"] != "a" {
				t.Fatalf("order: %v then %v", first, second)
			}
			// Live progress reaches others, unsequenced and unstored.
			teacher.send(map[string]any{"type": "board", "op": "progress", "id": "t2", "page": "p1", "tool": "pen", "points": []int{1, 2}})
			if live := b.next("board-live", ""); live["op"] != "progress" || live["by"] != "t" || live["seq"] != nil {
				t.Fatalf("%v", live)
			}
		})
		t.Run("validation names the field", func(t *testing.T) {
			for want, obj := range map[string]map[string]any{
				"object.id":     stroke("bad id!", "p1", 1, 1),
				"object.page":   stroke("x1", "../p1", 1, 1),
				"object.tool":   {"id": "x2", "page": "p1", "tool": "spray", "color": "#000000", "width": 2, "points": []int{1, 1}},
				"object.color":  {"id": "x3", "page": "p1", "tool": "pen", "color": "red", "width": 2, "points": []int{1, 1}},
				"object.points": {"id": "x4", "page": "p1", "tool": "rect", "color": "#000000", "width": 2, "points": []int{1, 1}},
				"already used":  stroke("t1", "p1", 1, 1),
			} {
				teacher.send(map[string]any{"type": "board", "op": "add", "object": obj})
				if er := teacher.next("error", ""); er["code"] != "invalid" || !strings.Contains(er["message"].(string), want) {
					t.Errorf("%s: %v", want, er)
				}
			}
		})
		t.Run("a long stroke is thinned", func(t *testing.T) {
			pts := make([]int, 0, 2*5000)
			for i := range 5000 {
				pts = append(pts, i%1600, i%900)
			}
			teacher.send(map[string]any{"type": "board", "op": "add", "object": stroke("long", "p2", pts...)})
			got := b.next("event", "board")["object"].(map[string]any)["points"].([]any)
			if len(got) != 2*room.MaxPoints || got[0].(float64) != 0 || got[len(got)-2].(float64) != float64(4999%1600) {
				t.Fatalf("thinned to %d values", len(got))
			}
		})
		t.Run("students erase and move only their own", func(t *testing.T) {
			a.send(map[string]any{"type": "board", "op": "erase", "page": "p1", "ids": []string{"t1"}})
			if er := a.next("error", ""); er["code"] != "invalid" {
				t.Fatalf("%v", er)
			}
			a.send(map[string]any{"type": "board", "op": "move", "page": "p1", "ids": []string{"a1", "t1"}, "dx": 100, "dy": 50})
			mv := b.next("event", "board")
			if mv["op"] != "move" || fmt.Sprint(mv["ids"]) != "[a1]" {
				t.Fatalf("%v", mv)
			}
		})
		t.Run("undo and redo are per user", func(t *testing.T) {
			teacher.send(map[string]any{"type": "board", "op": "add", "object": stroke("t3", "p1", 1, 1, 2, 2)})
			a.send(map[string]any{"type": "board", "op": "add", "object": stroke("a3", "p1", 3, 3, 4, 4)})
			teacher.send(map[string]any{"type": "board", "op": "undo"}) // removes t3, not a3
			late := e.mustJoin(c, "late", joinOpts{})
			if got := ids(boardPage(t, late.welcome, "p1")); got != "t1,a1,a3" {
				t.Fatalf("after the teacher's undo: %s", got)
			}
			teacher.send(map[string]any{"type": "board", "op": "redo"})
			a.send(map[string]any{"type": "board", "op": "undo"}) // removes a3
			a.send(map[string]any{"type": "board", "op": "undo"}) // moves a1 back
			late = e.mustJoin(c, "late", joinOpts{})
			objs := boardPage(t, late.welcome, "p1")
			if got := ids(objs); got != "t1,a1,t3" {
				t.Fatalf("after redo and undos: %s", got)
			}
			if pts := objs[1]["points"].([]any); pts[0].(float64) != 5 {
				t.Fatalf("a1 not moved back: %v", pts)
			}
			// An erase undone puts the object back in its place.
			teacher.send(map[string]any{"type": "board", "op": "erase", "page": "p1", "ids": []string{"t1"}})
			teacher.send(map[string]any{"type": "board", "op": "undo"})
			late = e.mustJoin(c, "late", joinOpts{})
			if got := ids(boardPage(t, late.welcome, "p1")); got != "t1,a1,t3" {
				t.Fatalf("after undoing an erase: %s", got)
			}
		})
		t.Run("clear and pages are the teacher's", func(t *testing.T) {
			a.send(map[string]any{"type": "board", "op": "clear", "page": "p1"})
			if er := a.next("error", ""); er["code"] != "forbidden" {
				t.Fatalf("%v", er)
			}
			a.send(map[string]any{"type": "board", "op": "page", "page": "p2"})
			if er := a.next("error", ""); er["code"] != "forbidden" {
				t.Fatalf("%v", er)
			}
			teacher.send(map[string]any{"type": "board", "op": "page", "page": "p2"})
			for {
				if ev := b.next("event", "board"); ev["op"] == "page" {
					if ev["page"] != "p2" {
						t.Fatalf("%v", ev)
					}
					break
				}
			}
			teacher.send(map[string]any{"type": "board", "op": "clear", "page": "p1"})
		})
		t.Run("the board outlives the room", func(t *testing.T) {
			e.hub.Close()
			hub := &room.Hub{Store: e.st, Now: e.clock.Now}
			defer hub.Close()
			e2 := *e
			e2.hub = hub
			w := e2.mustJoin(c, "t", joinOpts{teacher: true}).welcome
			board := w["snapshot"].(map[string]any)["board"].(map[string]any)
			if board["page"] != "p2" || len(boardPage(t, w, "p1")) != 0 || ids(boardPage(t, w, "p2")) != "long" {
				t.Fatalf("after a restart: page %v, p1 %s, p2 %s", board["page"], ids(boardPage(t, w, "p1")), ids(boardPage(t, w, "p2")))
			}
		})
	})
}

// TestBoardLargePage fills a page with 20,000 objects and checks a late
// joiner gets them all; BenchmarkJoinLargeBoard times that join.
func TestBoardLargePage(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		c := e.class(nil)
		fillBoard(t, e, c, room.MaxPageObjects)
		teacher := e.mustJoin(c, "t", joinOpts{teacher: true})
		if n := len(boardPage(t, teacher.welcome, "p1")); n != room.MaxPageObjects {
			t.Fatalf("snapshot has %d objects", n)
		}
		teacher.send(map[string]any{"type": "board", "op": "add", "object": stroke("one-more", "p1", 1, 1)})
		if er := teacher.next("error", ""); !strings.Contains(er["message"].(string), "page is full") {
			t.Fatalf("%v", er)
		}
	})
}

func fillBoard(t testing.TB, e *env, c lms.LiveClass, n int) {
	rows := make([]lms.BoardObject, 0, n)
	for i := range n {
		o := room.Object{ID: fmt.Sprint("o", i), Page: "p1", Tool: "pen", Color: "#000000", Width: 2, By: "t", Seq: int64(i + 1),
			Points: []int{i % 1600, i % 900, (i + 7) % 1600, (i + 3) % 900, (i + 11) % 1600, (i + 5) % 900, (i + 13) % 1600, (i + 8) % 900}}
		data, _ := json.Marshal(o)
		rows = append(rows, lms.BoardObject{ID: o.ID, Page: "p1", Ord: int64(i + 1), Data: data})
	}
	if err := e.st.SaveBoardObjects(context.Background(), e.domain, c.ID, 1, rows); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkJoinLargeBoard measures a join that opens the room (loading
// 20,000 objects from the store) and one that joins an open room.
func BenchmarkJoinLargeBoard(b *testing.B) {
	for _, be := range apitest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			st := apitest.OpenStore(b, be)
			d, _, _ := st.CreateDomain(context.Background(), "A")
			clock := &apitest.Clock{}
			clock.Set(start)
			e := &env{st: st, clock: clock, domain: d.ID}
			cl, err := st.CreateLiveClass(context.Background(), d.ID, lms.LiveClass{Title: "Big", Date: "2031-03-10", StartMinute: 900,
				EndMinute: 960, TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd",
				Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
			if err != nil {
				b.Fatal(err)
			}
			cl, _ = st.LiveClass(context.Background(), d.ID, cl.ID)
			fillBoard(b, e, cl, room.MaxPageObjects)
			join := func(hub *room.Hub, user string) {
				l := signing.Launch{Domain: d.ID, Class: cl.ID, Occurrence: 1, UserID: user, Teacher: user == "t",
					Expires: start.Add(3 * time.Hour)}
				conn, err := hub.Join(context.Background(), room.Entry{Launch: l, Class: cl, Plan: lms.PlanOf("")})
				if err != nil {
					b.Fatal(err)
				}
				if msg := <-conn.Out(); !strings.Contains(string(msg[:40]), "welcome") {
					b.Fatalf("%s", msg[:40])
				}
				conn.Leave()
			}
			b.Run("open room", func(b *testing.B) {
				for b.Loop() {
					hub := &room.Hub{Store: st, Now: clock.Now}
					join(hub, "t")
					hub.Close()
				}
			})
			b.Run("open room joined", func(b *testing.B) {
				hub := &room.Hub{Store: st, Now: clock.Now}
				defer hub.Close()
				join(hub, "first")
				for i := 0; b.Loop(); i++ {
					join(hub, fmt.Sprint("s", i))
				}
			})
		})
	}
}
