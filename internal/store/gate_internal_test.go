package store

import (
	"context"
	"errors"
	"testing"
)

func TestGateLetsAtMostItsSizeThrough(t *testing.T) {
	for _, size := range []int{1, 4} {
		g := make(gate, size)
		entered := make(chan struct{})
		release := make(chan struct{})
		callers := size + 3
		for range callers {
			go func() {
				if err := g.enter(context.Background()); err != nil {
					t.Error(err)
					return
				}
				entered <- struct{}{}
				<-release
				g.leave()
			}()
		}
		for range size {
			<-entered
		}
		// The gate is full: a caller whose context has ended is refused,
		// whatever the scheduler does, since no place can come free.
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		if err := g.enter(ended); !errors.Is(err, context.Canceled) {
			t.Fatalf("gate of %d, full: enter with an ended context = %v, want context.Canceled", size, err)
		}
		// Each place given back lets exactly one waiter through.
		for range callers - size {
			release <- struct{}{}
			<-entered
			if len(g) != size {
				t.Fatalf("gate of %d: %d places taken with waiters left", size, len(g))
			}
		}
		for range size {
			release <- struct{}{}
		}
	}
}

func TestGateFullAnswersAnEndedContext(t *testing.T) {
	g := make(gate, 2)
	for range 2 {
		if err := g.enter(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.enter(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("enter a full gate, context cancelled: %v, want context.Canceled", err)
	}
	if len(g) != 2 {
		t.Fatalf("%d places taken, want the 2 held: a cancelled caller must take none", len(g))
	}
	// A waiter gets the place given back.
	go func() { done <- g.enter(context.Background()) }()
	g.leave()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
