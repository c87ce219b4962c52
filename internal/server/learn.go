package server

import (
	"context"
	"fmt"

	"github.com/lectern-lms/lectern/internal/learn"
)

// openLearn builds the course-content service the management API, the
// learner portal and the media route share. Its media-link secret is kept
// in the store, so every process sharing the database signs alike.
func (m *Main) openLearn(ctx context.Context) error {
	secret, err := m.Store.ServerSecret(ctx, "media")
	if err != nil {
		return fmt.Errorf("media secret: %w", err)
	}
	m.Learn = &learn.Service{Store: m.Store, Blobs: m.Blobs(), Now: m.Now, Secret: secret, Logger: m.Logger}
	return nil
}
