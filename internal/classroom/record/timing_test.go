package record

import (
	"math"
	"testing"
)

func TestNTPMs(t *testing.T) {
	tests := []struct {
		ntp  uint64
		want float64
	}{
		{0, 0},
		{1 << 32, 1000},
		{1<<32 + 1<<31, 1500},
		{3_900_000_000<<32 | 1<<30, 3_900_000_000_000 + 250},
	}
	for _, tt := range tests {
		if got := ntpMs(tt.ntp); math.Abs(got-tt.want) > 1e-3 {
			t.Errorf("ntpMs(%#x) = %f, want %f", tt.ntp, got, tt.want)
		}
	}
}

func TestClockUnwrap(t *testing.T) {
	c := newClock(90000)
	steps := []struct {
		ts   uint32
		want int64
	}{
		{math.MaxUint32 - 100, math.MaxUint32 - 100},
		{math.MaxUint32 - 10, math.MaxUint32 - 10},
		{5, 1<<32 + 5}, // wrapped
		{math.MaxUint32 - 50, math.MaxUint32 - 50}, // reordered, from before the wrap
		{100, 1<<32 + 100},
	}
	for _, s := range steps {
		if got := c.unwrap(s.ts); got != s.want {
			t.Errorf("unwrap(%d) = %d, want %d", s.ts, got, s.want)
		}
	}
}

func TestClockMapping(t *testing.T) {
	c := newClock(48000)
	// First packet: anchored on its arrival.
	c.packet(1000, 500)
	if got := c.at(1000); got != 500 {
		t.Errorf("first packet at %d, want 500", got)
	}
	if got := c.at(1000 + 48*20); got != 520 {
		t.Errorf("20 ms later at %d, want 520", got)
	}
	// A packet that comes sooner than that: the first one was late.
	c.packet(1000+48*40, 535)
	c.packet(1000+48*60, 560) // later: no change
	if got := c.at(1000 + 48*60); got != 555 {
		t.Errorf("after a packet 5 ms early at %d, want 555", got)
	}
	c.packet(1000+48*80, 570)
	// A sender report moves the anchor: the RTP time 1000+48*100 was
	// sampled at NTP 10590, 590 on the internal clock (10 ms earlier than
	// the arrival clock said).
	off := 10000.0
	c.report(1000+48*100, 10590, &off)
	c.packet(1000+48*110, 620) // a packet slower than the report: no change
	if got := c.at(1000 + 48*120); got != 610 {
		t.Errorf("after the report at %d, want 610", got)
	}
	// A report moving the track back never makes time go back.
	c.report(1000+48*140, 10600, &off)
	if got := c.at(1000 + 48*140); got != 611 {
		t.Errorf("after a report back at %d, want 611 (one after the last)", got)
	}
	if got := c.at(1000 + 48*160); got != 620 {
		t.Errorf("then at %d, want 620", got)
	}
	// A better offset for the connection moves the track with it.
	off = 10005
	if got := c.at(1000 + 48*180); got != 635 {
		t.Errorf("with the new offset at %d, want 635", got)
	}
	// A packet that took less time to come than the offset says (sent
	// at NTP 10660, arrived at 654) makes it better.
	c.packet(1000+48*200, 654)
	if off != 10006 {
		t.Errorf("offset %f after a quick packet, want 10006", off)
	}
	c.packet(1000+48*220, 690)
	if off != 10006 {
		t.Errorf("offset %f after a slow packet, want 10006", off)
	}
	// Across the 32-bit wrap.
	w := newClock(90000)
	var ts uint32 = math.MaxUint32 - 90*10 + 1
	w.packet(ts, 0)
	if got := w.at(ts + 90*1000); got != 1000 {
		t.Errorf("across the wrap at %d, want 1000", got)
	}
}
