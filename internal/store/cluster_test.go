package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// pgStore is a migrated PostgreSQL store (the cluster tables are
// PostgreSQL only); without LECTERN_TEST_DATABASE_URL the test fails under
// CI and is skipped elsewhere.
func pgStore(t *testing.T) *store.Store {
	return apitest.OpenStore(t, apitest.Postgres(t))
}

func TestClusterNeedsPostgres(t *testing.T) {
	st := apitest.OpenStore(t, apitest.Backend{Name: "sqlite"})
	if _, err := st.ClaimRoom(context.Background(), store.RoomKey{Domain: 1, Class: 1, Sitting: 1}, "a", time.Second); !errors.Is(err, store.ErrNotPostgres) {
		t.Fatalf("claim on SQLite: %v", err)
	}
}

func TestRoomLeases(t *testing.T) {
	st := pgStore(t)
	ctx := context.Background()
	d, _, _ := st.CreateDomain(ctx, "A")
	for _, id := range []string{"a", "b", "c"} {
		if err := st.RegisterNode(ctx, store.Node{ID: id, InternalURL: "http://" + id}); err != nil {
			t.Fatal(err)
		}
	}
	k := store.RoomKey{Domain: d.ID, Class: 7, Sitting: 1}
	const ttl = time.Minute
	const expired = -time.Second // a lease that is already over: no waiting

	l, err := st.ClaimRoom(ctx, k, "a", ttl)
	if err != nil || l.Node != "a" || l.Epoch != 1 || l.Previous != "" {
		t.Fatalf("first claim: %+v %v", l, err)
	}
	if l, err = st.ClaimRoom(ctx, k, "b", ttl); err != nil || l.Node != "a" || l.Epoch != 1 {
		t.Fatalf("claim of a live lease by another node must return the holder: %+v %v", l, err)
	}
	if l, err = st.ClaimRoom(ctx, k, "a", expired); err != nil || l.Node != "a" || l.Epoch != 1 {
		t.Fatalf("a claim by the holder keeps the epoch: %+v %v", l, err)
	}
	if _, exp, _ := st.RoomLease(ctx, k); time.Until(exp) < 50*time.Second {
		t.Fatalf("a claim must not change a live lease's expiry (only heartbeats extend it): %v", exp)
	}
	// Expire it: a heartbeat with a negative time.
	st.Heartbeat(ctx, "a", 0, expired)
	l, err = st.ClaimRoom(ctx, k, "b", ttl)
	if err != nil || l.Node != "b" || l.Epoch != 2 || l.Previous != "a" || l.PreviousHeartbeat.IsZero() {
		t.Fatalf("takeover of an expired lease: %+v %v", l, err)
	}

	// Heartbeat renews every live lease of a node in one statement and
	// lists them; an expired one is not revived.
	k2 := store.RoomKey{Domain: d.ID, Class: 8, Sitting: 1}
	k3 := store.RoomKey{Domain: d.ID, Class: 9, Sitting: 1}
	st.ClaimRoom(ctx, k2, "b", ttl)
	st.ClaimRoom(ctx, k3, "b", expired)
	held, err := st.Heartbeat(ctx, "b", 3, ttl)
	if err != nil || len(held) != 2 || fmt.Sprint(held) == "" {
		t.Fatalf("heartbeat: %v %v", held, err)
	}
	for _, h := range held {
		if h.Key == k3 {
			t.Errorf("expired lease renewed: %v", held)
		}
	}
	nodes, err := st.Nodes(ctx, ttl)
	if err != nil || len(nodes) != 3 || nodes[2].ID != "b" || nodes[2].Load != 3 {
		t.Fatalf("nodes, least loaded first: %+v %v", nodes, err)
	}

	// The sweeper takes the expired lease and says whose it was.
	orphans, err := st.OrphanedLeases(ctx, 0)
	if err != nil || len(orphans) != 1 || orphans[0].Key != k3 || orphans[0].Previous != "b" {
		t.Fatalf("orphans: %+v %v", orphans, err)
	}
	if err := st.ReleaseRoom(ctx, k2, "b", 99); err != nil {
		t.Fatal(err)
	}
	if l, _, err := st.RoomLease(ctx, k2); err != nil || l.Node != "b" {
		t.Fatalf("release with a stale epoch must not drop the lease: %+v %v", l, err)
	}
	st.ReleaseRoom(ctx, k2, "b", 1)
	if _, _, err := st.RoomLease(ctx, k2); !lms.IsNotFound(err) {
		t.Fatalf("after release: %v", err)
	}
}

// TestRoomLeaseRace: three nodes race to claim the same 200 rooms; each
// room ends with exactly one owner, and every claimer was told that owner.
func TestRoomLeaseRace(t *testing.T) {
	st := pgStore(t)
	ctx := context.Background()
	d, _, _ := st.CreateDomain(ctx, "A")
	nodes := []string{"a", "b", "c"}
	for _, id := range nodes {
		st.RegisterNode(ctx, store.Node{ID: id, InternalURL: "http://" + id})
	}
	const rooms = 200
	seen := make([][3]string, rooms)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i, id := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rooms {
				l, err := st.ClaimRoom(ctx, store.RoomKey{Domain: d.ID, Class: int64(r + 1), Sitting: 1}, id, time.Minute)
				if err != nil {
					errs <- err
					return
				}
				seen[r][i] = l.Node
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for r, s := range seen {
		if s[0] != s[1] || s[1] != s[2] || s[0] == "" {
			t.Fatalf("room %d: claimers were told owners %v", r+1, s)
		}
	}
}

// A takeover closes the open sessions of its own sitting only.
func TestTakeoverClosesItsSittingOnly(t *testing.T) {
	st := pgStore(t)
	ctx := context.Background()
	d, _, _ := st.CreateDomain(ctx, "A")
	at := time.Date(2031, 1, 2, 9, 0, 0, 0, time.UTC)
	ev := func(class int64, seq int, user, kind string, at time.Time) lms.AttendanceEvent {
		return lms.AttendanceEvent{ClassID: class, OccurrenceSeq: seq, UserRef: user, UserName: user, Kind: kind, At: at}
	}
	c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "Q", Date: "2031-01-02", StartMinute: 540, EndMinute: 600,
		TimezoneName: "Europe/London", Currency: "usd", Occurrences: []lms.Occurrence{{Start: at, End: at.Add(time.Hour)}, {Start: at.Add(24 * time.Hour), End: at.Add(25 * time.Hour)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddAttendance(ctx, d.ID, ev(c.ID, 1, "ann", lms.AttendanceJoin, at), ev(c.ID, 1, "bob", lms.AttendanceJoin, at),
		ev(c.ID, 1, "bob", lms.AttendanceLeave, at.Add(time.Minute)), ev(c.ID, 2, "cy", lms.AttendanceJoin, at)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := st.RegisterNode(ctx, store.Node{ID: id, InternalURL: "http://" + id}); err != nil {
			t.Fatal(err)
		}
	}
	k := store.RoomKey{Domain: d.ID, Class: c.ID, Sitting: 1}
	if _, err := st.ClaimRoom(ctx, k, "a", -time.Second); err != nil {
		t.Fatal(err)
	}
	l, err := st.ClaimRoom(ctx, k, "b", time.Minute)
	n := l.Closed
	if err != nil || l.Previous != "a" || n != 1 {
		t.Fatalf("closed %d: %v", n, err)
	}
	evs, _ := st.Attendance(ctx, d.ID, c.ID, "")
	var leaves []string
	for _, e := range evs {
		if e.Kind == lms.AttendanceLeave {
			leaves = append(leaves, fmt.Sprintf("%s@%d", e.UserRef, e.OccurrenceSeq))
		}
	}
	if fmt.Sprint(leaves) != "[bob@1 ann@1]" && fmt.Sprint(leaves) != "[ann@1 bob@1]" {
		t.Fatalf("leaves: %v (cy's sitting 2 must stay open)", leaves)
	}
}

// Writes made under a lease its node lost (a stale epoch) are refused;
// the new owner's go through; a takeover fails the segments the old owner
// was recording and the next recorder continues the parts.
func TestFencedWrites(t *testing.T) {
	st := pgStore(t)
	ctx := context.Background()
	d, _, _ := st.CreateDomain(ctx, "A")
	at := time.Date(2031, 1, 2, 9, 0, 0, 0, time.UTC)
	c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "F", Date: "2031-01-02", StartMinute: 540, EndMinute: 600,
		TimezoneName: "Europe/London", Currency: "usd", Occurrences: []lms.Occurrence{{Start: at, End: at.Add(time.Hour)}}})
	if err != nil {
		t.Fatal(err)
	}
	k := store.RoomKey{Domain: d.ID, Class: c.ID, Sitting: 1}
	for _, id := range []string{"old", "new"} {
		if err := st.RegisterNode(ctx, store.Node{ID: id, InternalURL: "http://" + id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.ClaimRoom(ctx, k, "old", -time.Second); err != nil {
		t.Fatal(err)
	}
	old := store.Fence{Key: k, Node: "old", Epoch: 1}
	rec, err := st.AddFencedRecording(ctx, d.ID, old, lms.Recording{ClassID: c.ID, Name: "part 1", State: lms.RecordingActive, OccurrenceSeq: 1})
	if err != nil {
		t.Fatalf("a recording under the live lease: %v", err)
	}
	l, err := st.ClaimRoom(ctx, k, "new", time.Minute)
	if err != nil || l.Epoch != 2 {
		t.Fatalf("takeover: %+v %v", l, err)
	}
	if n, err := st.FailActiveRecordings(ctx, k); n != 1 || err != nil {
		t.Fatalf("the old owner's segments failed: %d %v", n, err)
	}
	if got, _ := st.Recording(ctx, d.ID, rec.ID); got.State != lms.RecordingFailed {
		t.Fatalf("old segment: %s", got.State)
	}
	if seg, err := st.NextRecordingSegment(ctx, d.ID, c.ID, 1); seg != 1 || err != nil {
		t.Fatalf("next segment: %d %v", seg, err)
	}
	ev := lms.AttendanceEvent{ClassID: c.ID, OccurrenceSeq: 1, UserRef: "u", Kind: lms.AttendanceLeave, At: at}
	sitting := lms.Sitting{ClassID: c.ID, OccurrenceSeq: 1, Recording: lms.SittingPaused}
	writes := map[string]func(store.Fence) error{
		"attendance": func(f store.Fence) error { return st.AddFencedAttendance(ctx, d.ID, f, ev) },
		"recording": func(f store.Fence) error {
			_, err := st.AddFencedRecording(ctx, d.ID, f, lms.Recording{ClassID: c.ID, OccurrenceSeq: 1, Segment: 1})
			return err
		},
		"finish recording": func(f store.Fence) error {
			rec.State = lms.RecordingReady
			return st.FinishFencedRecording(ctx, d.ID, f, rec, nil)
		},
		"sitting": func(f store.Fence) error { return st.SaveFencedSitting(ctx, d.ID, f, sitting) },
		"room user": func(f store.Fence) error {
			return st.SaveRoomUser(ctx, f, d.ID, c.ID, 1, lms.RoomUser{UserRef: "u", HandAt: at})
		},
	}
	for name, write := range writes {
		if err := write(old); !errors.Is(err, store.ErrFenced) {
			t.Errorf("%s with the stale epoch: %v; want ErrFenced", name, err)
		}
		if err := write(store.Fence{Key: k, Node: "new", Epoch: 2}); err != nil {
			t.Errorf("%s by the new owner: %v", name, err)
		}
	}
	if err := st.CheckFence(ctx, old); !errors.Is(err, store.ErrFenced) {
		t.Errorf("check of the stale epoch: %v", err)
	}
}

// Claims racing for a dead node's room on behalf of the same node report
// one takeover between them (the dead node's sessions close once).
func TestOneTakeoverPerDeath(t *testing.T) {
	st := pgStore(t)
	ctx := context.Background()
	d, _, _ := st.CreateDomain(ctx, "A")
	for _, id := range []string{"a", "b"} {
		if err := st.RegisterNode(ctx, store.Node{ID: id, InternalURL: "http://" + id}); err != nil {
			t.Fatal(err)
		}
	}
	for sitting := 1; sitting <= 20; sitting++ {
		k := store.RoomKey{Domain: d.ID, Class: 9, Sitting: sitting}
		if _, err := st.ClaimRoom(ctx, k, "a", -time.Second); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		takeovers := 0
		for range 4 {
			wg.Go(func() {
				l, err := st.ClaimRoom(ctx, k, "b", time.Minute)
				if err != nil || l.Node != "b" || l.Epoch != 2 {
					t.Errorf("claim: %+v %v", l, err)
				}
				if l.Previous != "" {
					mu.Lock()
					takeovers++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if takeovers != 1 {
			t.Fatalf("sitting %d: %d claims reported the takeover; want 1", sitting, takeovers)
		}
	}
}

// A takeover closes the dead holder's attendance sessions in its own
// transaction, at the holder's last heartbeat: every session a node opens
// after its claim returned (a client that reconnected through it) comes
// after those leaves and stays open. Four nodes claim each room at once,
// each recording ann's rejoin as soon as its claim returns.
func TestTakeoverClosesTheDeadHoldersSessionsFirst(t *testing.T) {
	st := pgStore(t)
	ctx := context.Background()
	d, _, _ := st.CreateDomain(ctx, "A")
	at := time.Date(2031, 1, 2, 9, 0, 0, 0, time.UTC)
	nodes := []string{"a", "b", "c", "d", "e"}
	for _, id := range nodes {
		if err := st.RegisterNode(ctx, store.Node{ID: id, InternalURL: "http://" + id}); err != nil {
			t.Fatal(err)
		}
	}
	pool, _ := st.Pools()
	for round := 1; round <= 10; round++ {
		c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "Q", Date: "2031-01-02", StartMinute: 540, EndMinute: 600,
			TimezoneName: "Europe/London", Currency: "usd", Occurrences: []lms.Occurrence{{Start: at, End: at.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		k := store.RoomKey{Domain: d.ID, Class: c.ID, Sitting: 1}
		join := func(user string) error {
			return st.AddAttendance(ctx, d.ID, lms.AttendanceEvent{ClassID: c.ID, OccurrenceSeq: 1, UserRef: user, UserName: user,
				Kind: lms.AttendanceJoin, At: time.Now()})
		}
		if _, err := st.ClaimRoom(ctx, k, "a", -time.Second); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"ann", "bob"} {
			if err := join(u); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		closed := make(chan int, 4)
		for _, node := range nodes[1:] {
			wg.Go(func() {
				l, err := st.ClaimRoom(ctx, k, node, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if l.Previous != "" {
					closed <- l.Closed
				}
				if err := join("ann"); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		close(closed)
		if n := <-closed; n != 2 {
			t.Fatalf("round %d: the takeover closed %d sessions; want 2 (ann's and bob's)", round, n)
		}
		var events []string
		err = scanEvents(ctx, pool, c.ID, func(user, kind string) { events = append(events, user+" "+kind) })
		if err != nil {
			t.Fatal(err)
		}
		want := "[ann join bob join ann leave bob leave ann join ann join ann join ann join]"
		if got := fmt.Sprint(events); got != want && got != strings.Replace(want, "ann leave bob leave", "bob leave ann leave", 1) {
			t.Fatalf("round %d: events in the order written %v; want %s", round, events, want)
		}
	}
}

// scanEvents calls fn with the user and kind of class's attendance events,
// in the order they were written.
func scanEvents(ctx context.Context, pool *sql.DB, class int64, fn func(user, kind string)) error {
	rows, err := pool.QueryContext(ctx, "SELECT user_ref, kind FROM attendance_events WHERE class_id = $1 ORDER BY id", class)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var u, k string
		if err := rows.Scan(&u, &k); err != nil {
			return err
		}
		fn(u, k)
	}
	return rows.Err()
}
