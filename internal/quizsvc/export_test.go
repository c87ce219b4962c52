package quizsvc

import (
	"context"

	"github.com/lectern-lms/lectern/internal/store"
)

// Expire finishes one attempt as Sweep does, for the attempts a test
// closes between Sweep's listing and its finish.
func (s *Service) Expire(ctx context.Context, r store.AttemptRef) error { return s.expire(ctx, r) }
