// Package logwriter buffers a server's log lines and writes them out in
// batches: one system call per batch instead of one per request line.
//
// A batch is written when the buffer is full, when the flush interval has
// passed, and on Close. Lines written in the last interval before the
// process is killed (SIGKILL, a power cut) can be lost; that is the price of
// the batching, as with nginx's buffered access log. Each Write is kept
// whole: a batch never splits a line.
package logwriter

import (
	"io"
	"sync"
	"time"
)

// Writer is a buffered, periodically flushed io.Writer, safe for concurrent
// use.
type Writer struct {
	mu     sync.Mutex
	out    io.Writer
	buf    []byte
	size   int
	closed bool // after Close, writes go straight through

	stop chan struct{}
	done chan struct{}
}

// New returns a Writer to out that holds up to size bytes and writes them
// out at least every interval.
func New(out io.Writer, size int, interval time.Duration) *Writer {
	w := &Writer{out: out, buf: make([]byte, 0, size), size: size,
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.flushEvery(interval)
	return w
}

func (w *Writer) flushEvery(interval time.Duration) {
	defer close(w.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.Flush()
		case <-w.stop:
			return
		}
	}
}

// Write buffers p, first writing out what is buffered if p does not fit. A
// p larger than the buffer, or any p after Close, is written straight
// through.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf)+len(p) > w.size || w.closed {
		if err := w.flushLocked(); err != nil {
			return 0, err
		}
	}
	if len(p) > w.size || w.closed {
		return w.out.Write(p)
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// Flush writes out what is buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.out.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// Close stops the periodic flushing and writes out what is buffered; later
// writes are not buffered. Close may be called more than once.
func (w *Writer) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.stop)
	}
	w.mu.Unlock()
	<-w.done
	return w.Flush()
}
