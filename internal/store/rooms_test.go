package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
)

func TestRoomFileQuota(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, _ := st.CreateDomain(ctx, "A")
			start := time.Date(2031, 1, 2, 9, 0, 0, 0, time.UTC)
			c, err := st.CreateLiveClass(ctx, d.ID, lms.LiveClass{Title: "Q", Date: "2031-01-02", StartMinute: 540, EndMinute: 600,
				TimezoneName: "Europe/London", Currency: "usd", Occurrences: []lms.Occurrence{{Start: start, End: start.Add(time.Hour)}}})
			if err != nil {
				t.Fatal(err)
			}
			file := lms.RoomFile{ClassID: c.ID, OccurrenceSeq: 1, UserRef: "t", Name: "a", ContentType: "text/plain", Kind: "file",
				Size: 30, BlobKey: "k", Status: lms.FileReady, CreatedAt: start}
			// Ten uploads of 30 bytes race for a quota of 100: three fit.
			var wg sync.WaitGroup
			errs := make(chan error, 10)
			for range 10 {
				wg.Go(func() {
					_, err := st.AddRoomFile(ctx, d.ID, file, 100)
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			ok := 0
			for err := range errs {
				switch {
				case err == nil:
					ok++
				case lms.ErrorCode(err) != lms.CodeConflict:
					t.Fatalf("unexpected error: %v", err)
				}
			}
			files, err := st.RoomFiles(ctx, d.ID, c.ID)
			if ok != 3 || len(files) != 3 || err != nil {
				t.Fatalf("%d accepted, %d stored (%v)", ok, len(files), err)
			}
			other, _, _ := st.CreateDomain(ctx, "B")
			if _, err := st.RoomFile(ctx, other.ID, files[0].ID); !lms.IsNotFound(err) {
				t.Fatalf("another domain reads the file: %v", err)
			}
		})
	}
}
