package store_test

import (
	"context"
	"testing"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Verified keys are cached, but a rotation through the same Store drops
// them: the old key is refused at once, the new one accepted at once.
func TestRotatedKeyRefusedAtOnceByTheRotatingStore(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, keys, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			// Fill the cache with both keys.
			if _, err := st.AuthLMS(ctx, d.ID, keys.LMS); err != nil {
				t.Fatal(err)
			}
			if _, err := st.AuthClassroom(ctx, keys.Classroom); err != nil {
				t.Fatal(err)
			}
			if _, err := st.AuthLMS(ctx, d.ID+1, keys.LMS); lms.ErrorCode(err) != lms.CodeUnauthorized {
				t.Fatalf("LMS key for another domain id: %v", err)
			}
			newLMS, err := st.RotateKey(ctx, d.ID, store.APILMS)
			if err != nil {
				t.Fatal(err)
			}
			newCK, err := st.RotateKey(ctx, d.ID, store.APIClassroom)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.AuthLMS(ctx, d.ID, keys.LMS); lms.ErrorCode(err) != lms.CodeUnauthorized {
				t.Errorf("old LMS key right after the rotation: %v", err)
			}
			if _, err := st.AuthClassroom(ctx, keys.Classroom); lms.ErrorCode(err) != lms.CodeUnauthorized {
				t.Errorf("old classroom key right after the rotation: %v", err)
			}
			if got, err := st.AuthLMS(ctx, d.ID, newLMS); err != nil || got.ID != d.ID {
				t.Errorf("new LMS key: %v %v", got.ID, err)
			}
			if got, err := st.AuthClassroom(ctx, newCK); err != nil || got.ID != d.ID {
				t.Errorf("new classroom key: %v %v", got.ID, err)
			}
			// A plan change is seen at once too (the domain is cached with the key).
			if err := st.SetDomainPlan(ctx, d.ID, "small"); err != nil {
				t.Fatal(err)
			}
			if got, err := st.AuthClassroom(ctx, newCK); err != nil || got.Plan != "small" {
				t.Errorf("plan after a change: %q %v", got.Plan, err)
			}
		})
	}
}
