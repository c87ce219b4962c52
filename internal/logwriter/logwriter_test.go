package logwriter

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer records every Write as one call.
type lockedBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.buf.Write(p)
}

func (b *lockedBuffer) state() (string, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String(), b.writes
}

func TestWriterBatchesLinesUntilFlush(t *testing.T) {
	var out lockedBuffer
	w := New(&out, 1024, time.Hour)
	defer w.Close()
	for i := range 10 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if s, n := out.state(); s != "" || n != 0 {
		t.Fatalf("before Flush: %d writes, %q; want nothing written", n, s)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	s, n := out.state()
	if n != 1 || !strings.HasPrefix(s, "line 0\n") || !strings.HasSuffix(s, "line 9\n") || strings.Count(s, "\n") != 10 {
		t.Fatalf("after Flush: %d writes, %q; want the 10 lines in one write", n, s)
	}
}

func TestWriterFlushesWhenFullWithoutSplittingLines(t *testing.T) {
	var out lockedBuffer
	w := New(&out, 64, time.Hour)
	line := strings.Repeat("x", 19) + "\n" // 20 bytes: three fit in 64
	for range 7 {
		w.Write([]byte(line))
	}
	s, n := out.state()
	if n != 2 || len(s) != 120 {
		t.Fatalf("%d writes of %d bytes in all; want 2 writes of 3 lines each", n, len(s))
	}
	w.Write(bytes.Repeat([]byte("y"), 100)) // larger than the buffer: written through, after the buffered line
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = out.state()
	if want := strings.Repeat(line, 7) + strings.Repeat("y", 100); s != want {
		t.Fatalf("got %q, want the lines in order then the large write", s)
	}
}

func TestWriterFlushesOnInterval(t *testing.T) {
	var out lockedBuffer
	w := New(&out, 1024, 10*time.Millisecond)
	defer w.Close()
	w.Write([]byte("tick\n"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s, _ := out.state(); s == "tick\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the line was not written out by the periodic flush")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWriterAfterCloseWritesThrough(t *testing.T) {
	var out lockedBuffer
	w := New(&out, 1024, time.Hour)
	w.Write([]byte("a\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s, _ := out.state(); s != "a\n" {
		t.Fatalf("Close wrote %q, want the buffered line", s)
	}
	w.Write([]byte("b\n"))
	if s, _ := out.state(); s != "a\nb\n" {
		t.Fatalf("after Close: %q, want b written at once", s)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestWriterConcurrentLinesStayWhole(t *testing.T) {
	var out lockedBuffer
	w := New(&out, 256, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				fmt.Fprintf(w, "goroutine %d line %d\n", g, i)
			}
		}()
	}
	wg.Wait()
	w.Close()
	s, _ := out.state()
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) != 1600 {
		t.Fatalf("%d lines, want 1600", len(lines))
	}
	for _, l := range lines {
		var g, i int
		if _, err := fmt.Sscanf(l, "goroutine %d line %d", &g, &i); err != nil {
			t.Fatalf("broken line %q", l)
		}
	}
}
