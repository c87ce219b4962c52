package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// TestConsumeLoginLinkRace: 20 goroutines consume one token at once;
// exactly one gets the link, every other gets not-found.
func TestConsumeLoginLinkRace(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, _ := st.CreateDomain(ctx, "A")
			u, err := st.CreateUser(ctx, d.ID, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			for round := range 3 {
				token := "race-token-" + string(rune('a'+round))
				if err := st.CreateLoginLink(ctx, store.LoginLink{DomainID: d.ID, UserID: u.ID, Purpose: "learn-login",
					ReturnTo: "/x", ExpiresAt: now.Add(time.Minute)}, token, now); err != nil {
					t.Fatal(err)
				}
				const n = 20
				var wg sync.WaitGroup
				start := make(chan struct{})
				results := make(chan error, n)
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						l, err := st.ConsumeLoginLink(ctx, d.ID, token, "learn-login", now)
						if err == nil && (l.UserID != u.ID || l.ReturnTo != "/x") {
							t.Errorf("consumed link %+v", l)
						}
						results <- err
					}()
				}
				close(start)
				wg.Wait()
				close(results)
				wins := 0
				for err := range results {
					switch {
					case err == nil:
						wins++
					case !lms.IsNotFound(err):
						t.Errorf("consume: %v", err)
					}
				}
				if wins != 1 {
					t.Fatalf("round %d: %d goroutines consumed the link, want exactly 1", round, wins)
				}
			}
		})
	}
}

// TestConsumeLoginLinkRules: expiry is exclusive at expires_at, the
// purpose and the domain must match, and a refused attempt from another
// domain does not spend the link.
func TestConsumeLoginLinkRules(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			a, _, _ := st.CreateDomain(ctx, "A")
			other, _, _ := st.CreateDomain(ctx, "B")
			u, _ := st.CreateUser(ctx, a.ID, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
			now := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			exp := now.Add(2 * time.Minute)
			mk := func(token string) {
				if err := st.CreateLoginLink(ctx, store.LoginLink{DomainID: a.ID, UserID: u.ID, Purpose: "learn-login", ExpiresAt: exp}, token, now); err != nil {
					t.Fatal(err)
				}
			}
			mk("t1")
			if _, err := st.ConsumeLoginLink(ctx, a.ID, "t1", "learn-login", exp); !lms.IsNotFound(err) {
				t.Errorf("consumed at expires_at: %v", err)
			}
			mk("t2")
			if _, err := st.ConsumeLoginLink(ctx, other.ID, "t2", "learn-login", now); !lms.IsNotFound(err) {
				t.Errorf("other domain consumed the link: %v", err)
			}
			if _, err := st.ConsumeLoginLink(ctx, a.ID, "t2", "classroom", now); !lms.IsNotFound(err) {
				t.Errorf("other purpose consumed the link: %v", err)
			}
			if _, err := st.ConsumeLoginLink(ctx, a.ID, "t2", "learn-login", exp.Add(-time.Second)); err != nil {
				t.Errorf("a second before expiry, after refused attempts: %v", err)
			}
			mk("t3")
			if n, err := st.RevokeLoginLinks(ctx, a.ID); err != nil || n != 2 { // t1 (expired, unused) and t3
				t.Errorf("revoke: %d %v", n, err)
			}
			if _, err := st.ConsumeLoginLink(ctx, a.ID, "t3", "learn-login", now); !lms.IsNotFound(err) {
				t.Errorf("revoked link consumed: %v", err)
			}
		})
	}
}

// TestSSOKeyRotation: the previous key stays valid for the grace period,
// keys before it end at once, and the sealed secret opens only for its
// own domain.
func TestSSOKeyRotation(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, _ := st.CreateDomain(ctx, "A")
			other, _, _ := st.CreateDomain(ctx, "B")
			now := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			seal := []byte("a server secret of thirty-two b.")
			k1, err := st.RotateSSOKey(ctx, d.ID, seal, time.Hour, now)
			if err != nil {
				t.Fatal(err)
			}
			k2, _ := st.RotateSSOKey(ctx, d.ID, seal, time.Hour, now.Add(time.Minute))
			keys, _ := st.SSOKeys(ctx, d.ID, seal, now.Add(2*time.Minute))
			if len(keys) != 2 || keys[0].Kid != k2.Kid || keys[0].Secret != k2.Secret || keys[1].Kid != k1.Kid || keys[1].Secret != k1.Secret {
				t.Fatalf("during rotation: %+v", keys)
			}
			if keys, _ := st.SSOKeys(ctx, d.ID, seal, now.Add(61*time.Minute+time.Second)); len(keys) != 1 || keys[0].Kid != k2.Kid {
				t.Errorf("after the grace period: %+v", keys)
			}
			k3, _ := st.RotateSSOKey(ctx, d.ID, seal, time.Hour, now.Add(2*time.Minute))
			if keys, _ := st.SSOKeys(ctx, d.ID, seal, now.Add(3*time.Minute)); len(keys) != 2 || keys[0].Kid != k3.Kid || keys[1].Kid != k2.Kid {
				t.Errorf("a third rotation keeps only the newest two: %+v", keys)
			}
			st.RotateSSOKey(ctx, d.ID, seal, 0, now.Add(4*time.Minute))
			if keys, _ := st.SSOKeys(ctx, d.ID, seal, now.Add(5*time.Minute)); len(keys) != 1 {
				t.Errorf("rotation without grace: %+v", keys)
			}
			if keys, _ := st.SSOKeys(ctx, other.ID, seal, now); len(keys) != 0 {
				t.Errorf("other domain sees keys: %+v", keys)
			}
			if _, err := st.SSOKeys(ctx, d.ID, []byte("another server secret, 32 bytes"), now.Add(5*time.Minute)); !errors.Is(err, store.ErrSSOSeal) {
				t.Errorf("opened under another server secret: %v", err)
			}
		})
	}
}

// TestLearnSessions: idle and absolute ends, ending one learner's
// sessions, and deleting a user ends theirs.
func TestLearnSessions(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, _ := st.CreateDomain(ctx, "A")
			other, _, _ := st.CreateDomain(ctx, "B")
			ann, _ := st.CreateUser(ctx, d.ID, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
			bob, _ := st.CreateUser(ctx, d.ID, lms.User{Name: "Bob", Username: "bob", Email: "bob@example.com"})
			now := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			end := now.Add(30 * 24 * time.Hour)
			for _, s := range []struct {
				tok string
				id  int64
			}{{"ann1", ann.ID}, {"ann2", ann.ID}, {"bob1", bob.ID}} {
				if _, err := st.CreateLearnSession(ctx, d.ID, s.id, s.tok, "link", now, end); err != nil {
					t.Fatal(err)
				}
			}
			active := func(tok string, at, idleSince time.Time) bool {
				_, err := st.ActiveLearnSession(ctx, d.ID, tok, at, idleSince)
				if err != nil && !lms.IsNotFound(err) {
					t.Fatal(err)
				}
				return err == nil
			}
			if ls, err := st.ActiveLearnSession(ctx, d.ID, "ann1", now, now.Add(-time.Hour)); err != nil || ls.User.Email != "ann@example.com" {
				t.Fatalf("active session: %+v %v", ls, err)
			}
			if _, err := st.ActiveLearnSession(ctx, other.ID, "ann1", now, now.Add(-time.Hour)); !lms.IsNotFound(err) {
				t.Errorf("other domain reads the session: %v", err)
			}
			if active("ann1", now.Add(time.Hour), now.Add(time.Second)) {
				t.Error("idle session still active")
			}
			if active("ann1", end, now.Add(-time.Hour)) {
				t.Error("session active at its absolute end")
			}
			if n, err := st.EndLearnSessions(ctx, d.ID, ann.ID); err != nil || n != 2 {
				t.Errorf("end ann's sessions: %d %v", n, err)
			}
			if active("ann2", now, now.Add(-time.Hour)) || !active("bob1", now, now.Add(-time.Hour)) {
				t.Error("ending ann's sessions did the wrong thing")
			}
			if _, err := st.DeleteUserByEmail(ctx, d.ID, "bob@example.com"); err != nil {
				t.Fatal(err)
			}
			if active("bob1", now, now.Add(-time.Hour)) {
				t.Error("deleted user's session still active")
			}
		})
	}
}

// TestUseJWTID: a jti is accepted once per domain.
func TestUseJWTID(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, _ := st.CreateDomain(ctx, "A")
			other, _, _ := st.CreateDomain(ctx, "B")
			now := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			if err := st.UseJWTID(ctx, d.ID, "j1", now.Add(time.Minute), now); err != nil {
				t.Fatal(err)
			}
			if err := st.UseJWTID(ctx, d.ID, "j1", now.Add(time.Minute), now); lms.ErrorCode(err) != lms.CodeConflict {
				t.Errorf("reused jti: %v", err)
			}
			if err := st.UseJWTID(ctx, other.ID, "j1", now.Add(time.Minute), now); err != nil {
				t.Errorf("same jti in another domain: %v", err)
			}
		})
	}
}

// TestLearnHost: set, find by host in any case, conflict, remove.
func TestLearnHost(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, _ := st.CreateDomain(ctx, "A")
			other, _, _ := st.CreateDomain(ctx, "B")
			if err := st.SetLearnHost(ctx, d.ID, "learn.school.com"); err != nil {
				t.Fatal(err)
			}
			if got, err := st.DomainByLearnHost(ctx, "LEARN.school.com"); err != nil || got.ID != d.ID {
				t.Errorf("by host: %+v %v", got, err)
			}
			if err := st.SetLearnHost(ctx, other.ID, "learn.school.com"); lms.ErrorCode(err) != lms.CodeConflict {
				t.Errorf("second domain on the same host: %v", err)
			}
			if err := st.SetLearnHost(ctx, d.ID, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := st.DomainByLearnHost(ctx, "learn.school.com"); !lms.IsNotFound(err) {
				t.Errorf("removed host still found: %v", err)
			}
			if err := st.SetLearnHost(ctx, 9999, "x.school.com"); !lms.IsNotFound(err) {
				t.Errorf("unknown domain: %v", err)
			}
		})
	}
}
