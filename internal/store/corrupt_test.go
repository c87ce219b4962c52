package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// TestCorruptRowsFailLoudly: a stored time or launch secret that does not
// parse is an error, never a zero time or an empty key (issue 12, item 14).
func TestCorruptRowsFailLoudly(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dir, u := t.TempDir(), apitest.IsolatedURL(t, b.URL)
			st, err := store.Open(ctx, store.Options{DatabaseURL: u, DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			raw, ph := apitest.OpenRaw(t, dir, u)
			d, keys, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "C", Date: "2030-01-02", StartMinute: 540, EndMinute: 600,
				TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd", Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
			if err != nil {
				t.Fatal(err)
			}
			corrupt := func(q string, arg any) {
				t.Helper()
				if _, err := raw.ExecContext(ctx, q+" = "+ph, arg); err != nil {
					t.Fatal(err)
				}
			}
			corrupt("UPDATE class_occurrences SET starts_at = '10000-01-01T00:00:00Z' WHERE class_id", c.ID)
			if got, err := st.LiveClass(ctx, d.ID, c.ID); err == nil {
				t.Errorf("a corrupt sitting start read as %v", got.Occurrences[0].Start)
			}
			corrupt("UPDATE live_classes SET created_at = 'yesterday' WHERE id", c.ID)
			if _, err := st.LiveClass(ctx, d.ID, c.ID); err == nil {
				t.Error("a corrupt created_at read without error")
			}
			corrupt("UPDATE domains SET launch_secret = 'not hex' WHERE id", d.ID)
			if got, err := st.AuthClassroom(ctx, keys.Classroom); err == nil {
				t.Errorf("a corrupt launch secret read as %x", got.LaunchSecret)
			}
			corrupt("UPDATE domains SET launch_secret = '' WHERE id", d.ID)
			if got, err := st.GetDomain(ctx, d.ID); err == nil {
				t.Errorf("an empty launch secret read as %x", got.LaunchSecret)
			}
		})
	}
}

// TestCorruptTimesFailLoudly: every table whose reads parse a stored
// instant fails the read when the instant is corrupt, on both databases
// (issue 12, item 14, for the tables added since: catalog, lessons,
// enrolments, quiz, attempts, gamification, recordings, rooms, payments,
// products, sign-in).
func TestCorruptTimesFailLoudly(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dir, u := t.TempDir(), apitest.IsolatedURL(t, b.URL)
			at := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
			st, err := store.Open(ctx, store.Options{DatabaseURL: u, DataDir: dir, Now: func() time.Time { return at }})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			raw, ph := apitest.OpenRaw(t, dir, u)
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			user, err := st.CreateUser(ctx, d.ID, lms.User{Name: "Ann", Username: "ann", Email: "ann@example.com"})
			must(err)
			course, err := st.CreateCourse(ctx, d.ID, lms.Course{Name: "C"})
			must(err)
			test, err := st.CreateTest(ctx, d.ID, lms.Test{Name: "T"})
			must(err)
			bundle, err := st.CreateBundle(ctx, d.ID, lms.Bundle{Name: "B"})
			must(err)
			section, err := st.CreateSection(ctx, d.ID, lms.Section{CourseID: course.ID, Title: "S"})
			must(err)
			class, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "L", Date: "2030-01-02", StartMinute: 540, EndMinute: 600,
				TimezoneID: 28, TimezoneName: "Europe/London", Currency: "usd", Occurrences: []lms.Occurrence{{Start: at, End: at.Add(time.Hour)}}})
			must(err)
			user2, err := st.CreateUser(ctx, d.ID, lms.User{Name: "Bo", Username: "bo", Email: "bo@example.com"})
			must(err)
			for _, email := range []string{user.Email, user2.Email} {
				_, err = st.Enroll(ctx, d.ID, lms.KindCourse, course.ID, email)
				must(err)
			}
			_, _, err = st.AddPoints(ctx, d.ID, store.PointsEntry{UserID: user.ID, Points: 5, Reason: "r", Event: "manual"})
			must(err)
			rec, err := st.AddRecording(ctx, d.ID, lms.Recording{ClassID: class.ID, Name: "R", BlobKey: "k", ContentType: "video/mp4"})
			must(err)
			_, err = st.AddRoomChat(ctx, d.ID, lms.ChatMessage{ClassID: class.ID, OccurrenceSeq: 1, From: "t", FromName: "T", Text: "hi", At: at})
			must(err)
			must(st.SaveSitting(ctx, d.ID, lms.Sitting{ClassID: class.ID, OccurrenceSeq: 1, OpenedAt: at}))
			order, err := st.CreateOrder(ctx, d.ID, store.Order{Source: store.SourceCheckout, BuyerEmail: user.Email, Currency: "usd"})
			must(err)
			order2, err := st.CreateOrder(ctx, d.ID, store.Order{Source: store.SourceCheckout, BuyerEmail: user.Email, Currency: "usd"})
			must(err)
			product, err := st.CreateProduct(ctx, d.ID, store.Product{Name: "P", Type: 1, SKU: "p-1"})
			must(err)
			_, err = st.CreateLearnSession(ctx, d.ID, user.ID, "session-token", "password", at, at.Add(time.Hour))
			must(err)

			for _, c := range []struct {
				name, update string
				id           int64
				read         func() error
			}{
				{"course", "UPDATE courses SET updated_at = 'garbage' WHERE id", course.ID,
					func() error { _, err := st.Course(ctx, d.ID, course.ID); return err }},
				{"test", "UPDATE tests SET created_at = '2030-13-01T00:00:00Z' WHERE id", test.ID,
					func() error { _, err := st.Test(ctx, d.ID, test.ID); return err }},
				{"bundle", "UPDATE bundles SET created_at = '' WHERE id", bundle.ID,
					func() error { _, err := st.Bundle(ctx, d.ID, bundle.ID); return err }},
				{"section", "UPDATE course_sections SET created_at = '10000-01-01T00:00:00Z' WHERE id", section.ID,
					func() error { _, err := st.Section(ctx, d.ID, section.ID); return err }},
				{"enrolment", "UPDATE enrollments SET created_at = 'x' WHERE user_id", user.ID,
					func() error { _, err := st.EnrolledCourses(ctx, d.ID, user.ID); return err }},
				{"enrolled at", "UPDATE enrollments SET created_at = 'x' WHERE user_id", user2.ID,
					func() error { _, _, err := st.EnrolledAt(ctx, d.ID, user2.ID, course.ID); return err }},
				{"points", "UPDATE points_ledger SET created_at = 'x' WHERE user_id", user.ID,
					func() error {
						_, _, err := st.Leaderboard(ctx, d.ID, store.LeaderboardQuery{}, store.Page{Limit: 10})
						return err
					}},
				{"recording", "UPDATE recordings SET created_at = 'x' WHERE id", rec.ID,
					func() error { _, err := st.Recording(ctx, d.ID, rec.ID); return err }},
				{"chat", "UPDATE room_chat SET at = 'x' WHERE class_id", class.ID,
					func() error { _, err := st.RoomChat(ctx, d.ID, class.ID, 1, 10); return err }},
				{"sitting", "UPDATE room_sittings SET opened_at = 'x' WHERE class_id", class.ID,
					func() error { _, err := st.Sitting(ctx, d.ID, class.ID, 1); return err }},
				{"order", "UPDATE orders SET created_at = 'x' WHERE id", order.ID,
					func() error { _, err := st.Order(ctx, d.ID, order.ID); return err }},
				{"paid order", "UPDATE orders SET paid_at = '2030-01-02' WHERE id", order2.ID,
					func() error { _, err := st.Order(ctx, d.ID, order2.ID); return err }},
				{"product", "UPDATE products SET updated_at = 'x' WHERE id", product.ID,
					func() error { _, err := st.Product(ctx, d.ID, product.ID); return err }},
				{"session", "UPDATE learn_sessions SET created_at = 'x' WHERE user_id", user.ID,
					func() error {
						_, err := st.ActiveLearnSession(ctx, d.ID, "session-token", at, at.Add(-time.Minute))
						return err
					}},
			} {
				if err := c.read(); err != nil {
					t.Fatalf("%s: reading the intact row: %v", c.name, err)
				}
				if _, err := raw.ExecContext(ctx, c.update+" = "+ph, c.id); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				err := c.read()
				if err == nil {
					t.Errorf("%s: a corrupt stored time read without error", c.name)
				} else if !strings.Contains(err.Error(), "corrupt stored time") {
					t.Errorf("%s: %v, want an error naming the corrupt time", c.name, err)
				}
			}
		})
	}
}
