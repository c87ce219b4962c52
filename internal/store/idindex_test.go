package store_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// userPages reads every page of domainID's users at limit lim and checks
// them against want (checkPages).
func userPages(t *testing.T, st *store.Store, domainID int64, name string, want []int64) {
	t.Helper()
	checkPages(t, name, want, func(off, lim int) ([]int64, int64, error) {
		us, total, err := st.ListUsers(context.Background(), domainID, store.UserFilter{}, store.Page{Offset: off, Limit: lim})
		return idsOf(us, func(u lms.User) int64 { return u.ID }), total, err
	})
}

// The pages of an unfiltered listing, whose ids come from memory
// (idindex.go), follow every write: users created (the ids above the
// largest held), deleted first, in the middle and last (the ids read
// again), created after a deletion (the count unchanged by the pair),
// and another domain's users never show.
func TestListedIDsFollowWrites(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, other := twoDomains(t, st)
			var ids []int64
			n := 0
			create := func(domainID int64) int64 {
				t.Helper()
				n++
				u, err := st.CreateUser(ctx, domainID, lms.User{Name: "U", Username: "u", Email: fmt.Sprintf("u%d@example.com", n)})
				if err != nil {
					t.Fatal(err)
				}
				return u.ID
			}
			remove := func(i int) {
				t.Helper()
				u, err := st.User(ctx, d.ID, ids[i])
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st.DeleteUserByEmail(ctx, d.ID, u.Email); err != nil {
					t.Fatal(err)
				}
				ids = slices.Delete(ids, i, i+1)
			}
			userPages(t, st, d.ID, "empty", ids)
			for range 12 {
				ids = append(ids, create(d.ID))
				create(other.ID)
			}
			userPages(t, st, d.ID, "created", ids)
			ids = append(ids, create(d.ID), create(d.ID))
			userPages(t, st, d.ID, "two more", ids)
			remove(0)
			userPages(t, st, d.ID, "first deleted", ids)
			remove(5)
			remove(len(ids) - 1)
			userPages(t, st, d.ID, "middle and last deleted", ids)
			remove(3)
			ids = append(ids, create(d.ID))
			userPages(t, st, d.ID, "one deleted, one created", ids)
			create(other.ID)
			userPages(t, st, d.ID, "the other domain written", ids)
		})
	}
}

// The ids above a given one come back whole and ascending, with the
// domain's counter, however many statements of a chunk each they take
// (a last one full, one short, or none above), and never another
// domain's.
func TestIDsAboveInChunks(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, other := twoDomains(t, st)
			var ids []int64
			for i := range 10 {
				for _, domainID := range []int64{d.ID, other.ID} {
					u, err := st.CreateUser(ctx, domainID, lms.User{Name: "U", Username: "u", Email: fmt.Sprintf("u%d-%d@example.com", domainID, i)})
					if err != nil {
						t.Fatal(err)
					}
					if domainID == d.ID {
						ids = append(ids, u.ID)
					}
				}
			}
			for _, c := range []struct {
				from, chunk int // ids[from:] are above
			}{
				{0, 3}, {0, 5}, {0, 10}, {0, 100}, {4, 3}, {7, 3}, {9, 1}, {10, 3},
			} {
				after := int64(0)
				if c.from > 0 {
					after = ids[c.from-1]
				}
				count, got, err := st.UserIDsAbove(ctx, d.ID, after, c.chunk)
				if err != nil {
					t.Fatal(err)
				}
				if want := ids[c.from:]; count != 10 || !slices.Equal(got, want) {
					t.Errorf("above the %d-th, %d a statement: %d counted, ids %v; want 10, %v", c.from, c.chunk, count, got, want)
				}
			}
		})
	}
}

// Readers racing writers never miss a user whose creation was
// acknowledged before their read began, nor list one whose deletion was.
func TestListedIDsNeverMissAnAcknowledgedWrite(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			// Pages from offset 4 are deep, read through the ids in memory
			// from their first read (cachedListPage); the domain's first
			// users are never deleted, so the rows before that page stay.
			store.SetDirectPageOffset(t, 4)
			var mu sync.Mutex
			// Acknowledged: the users created to stay, and those deleted.
			created, deleted := map[int64]bool{}, map[int64]bool{}
			var first []int64
			for i := range 8 {
				u, err := st.CreateUser(ctx, d.ID, lms.User{Name: "F", Username: "f", Email: fmt.Sprintf("f%d@example.com", i)})
				if err != nil {
					t.Fatal(err)
				}
				created[u.ID] = true
				first = append(first, u.ID)
			}
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						mu.Lock()
						mustHave, mustNot := maps.Clone(created), maps.Clone(deleted)
						mu.Unlock()
						for _, offset := range []int{0, 4} {
							us, _, err := st.ListUsers(ctx, d.ID, store.UserFilter{}, store.Page{Offset: offset, Limit: 500})
							if err != nil {
								t.Error(err)
								return
							}
							listed := map[int64]bool{}
							for _, id := range first[:offset] {
								listed[id] = true // before the page
							}
							for _, u := range us {
								listed[u.ID] = true
								if mustNot[u.ID] {
									t.Errorf("offset %d: user %d listed after its deletion was acknowledged", offset, u.ID)
									return
								}
							}
							for id := range mustHave {
								if !listed[id] {
									t.Errorf("offset %d: user %d missing after its creation was acknowledged", offset, id)
									return
								}
							}
						}
					}
				}()
			}
			var writers sync.WaitGroup
			for w := range 4 {
				writers.Add(1)
				go func() {
					defer writers.Done()
					for i := range 40 {
						email := fmt.Sprintf("w%d-%d@example.com", w, i)
						u, err := st.CreateUser(ctx, d.ID, lms.User{Name: "W", Username: "w", Email: email})
						if err != nil {
							t.Error(err)
							return
						}
						if i%3 != 0 { // kept: listed from now on
							mu.Lock()
							created[u.ID] = true
							mu.Unlock()
							continue
						}
						if _, err := st.DeleteUserByEmail(ctx, d.ID, email); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						deleted[u.ID] = true
						mu.Unlock()
					}
				}()
			}
			writers.Wait()
			close(stop)
			wg.Wait()
			var want []int64
			for id := range created {
				want = append(want, id)
			}
			slices.Sort(want)
			userPages(t, st, d.ID, "after the writes", want)
		})
	}
}

// Another process's creations and deletions (a `lectern` command) show in
// the server's pages once RecordCacheTTL has passed, as its records do.
func TestListedIDsSeeOtherProcesses(t *testing.T) {
	ctx := context.Background()
	server, command := serverAndCommand(t)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	server.SetRecordClock(func() time.Time { return now })
	d, _, err := server.CreateDomain(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 9 {
		u, err := server.CreateUser(ctx, d.ID, lms.User{Name: "U", Username: "u", Email: fmt.Sprintf("u%d@example.com", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	userPages(t, server, d.ID, "the server's own", ids)
	steps := []struct {
		name string
		do   func()
	}{
		{"created by the command", func() {
			u, err := command.CreateUser(ctx, d.ID, lms.User{Name: "C", Username: "c", Email: "c1@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, u.ID)
		}},
		{"deleted by the command", func() {
			if _, err := command.DeleteUserByEmail(ctx, d.ID, "u4@example.com"); err != nil {
				t.Fatal(err)
			}
			ids = slices.Delete(ids, 4, 5)
		}},
		{"one deleted and one created by the command", func() {
			if _, err := command.DeleteUserByEmail(ctx, d.ID, "u0@example.com"); err != nil {
				t.Fatal(err)
			}
			u, err := command.CreateUser(ctx, d.ID, lms.User{Name: "C", Username: "c", Email: "c2@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids[1:], u.ID)
		}},
	}
	for _, s := range steps {
		s.do()
		now = now.Add(store.RecordCacheTTL)
		userPages(t, server, d.ID, s.name, ids)
	}
}
