package store

import "context"

// gate lets at most cap(g) callers through at once; the others wait in the
// order they came, since a channel hands a freed place to its blocked
// senders first in, first out, and a newcomer cannot take a place a
// waiter is owed. A pool of database/sql connections alone keeps no order:
// it hands a freed connection to a random waiter.
type gate chan struct{}

// enter waits for a place, or for ctx to end (its error, and no place).
func (g gate) enter(ctx context.Context) error {
	select {
	case g <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave gives the place taken by enter back.
func (g gate) leave() { <-g }
