package loadtest

import "sync"

// Window phases of a counter.
const (
	beforeWindow = iota
	inWindow
	afterWindow
)

// counter counts the RTP packets of one received track: every packet, and
// during the measurement window the distinct sequence numbers, from which
// it derives loss. A retransmitted packet (the server answering a NACK
// resends it with its sequence number) counts as a packet but not as a
// second sequence number. It is safe for concurrent use.
type counter struct {
	mu      sync.Mutex
	packets uint64 // since the track started
	unwrap  unwrapper

	phase    int
	wPackets uint64 // packets in the window, retransmissions included
	wBytes   uint64 // their RTP payload and header bytes
	first    int64  // extended sequence number of the window's first packet
	last     int64  // highest extended sequence number in the window
	distinct uint64 // distinct sequence numbers in [first, last]
	seen     []uint64
}

// add records a packet of size bytes with sequence number seq.
func (c *counter) add(seq uint16, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.packets++
	ext := c.unwrap.extend(seq)
	if c.phase != inWindow {
		return
	}
	c.wPackets++
	c.wBytes += uint64(size)
	if c.distinct == 0 {
		c.first, c.last = ext, ext
	}
	if ext < c.first {
		return // sent before the window's first packet, arriving late
	}
	i := uint64(ext - c.first)
	if w := int(i/64) + 1; w > len(c.seen) {
		c.seen = append(c.seen, make([]uint64, w-len(c.seen))...)
	}
	if c.seen[i/64]&(1<<(i%64)) == 0 {
		c.seen[i/64] |= 1 << (i % 64)
		c.distinct++
	}
	c.last = max(c.last, ext)
}

// start opens the measurement window; stop closes it.
func (c *counter) start() {
	c.mu.Lock()
	c.phase = inWindow
	c.mu.Unlock()
}

func (c *counter) stop() {
	c.mu.Lock()
	c.phase = afterWindow
	c.mu.Unlock()
}

// total returns the packets received since the track started.
func (c *counter) total() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.packets
}

// highest returns the highest sequence number received.
func (c *counter) highest() uint16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return uint16(c.unwrap.highest)
}

// window returns the packets and bytes received in the window, and the
// sequence numbers expected (the span from the window's first to its
// highest) and missing from them.
func (c *counter) window() (packets, bytes, expected, missing uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.distinct == 0 {
		return c.wPackets, c.wBytes, 0, 0
	}
	expected = uint64(c.last-c.first) + 1
	return c.wPackets, c.wBytes, expected, expected - c.distinct
}

// unwrapper extends 16-bit RTP sequence numbers to int64, counting
// wrap-arounds. A number more than half the space behind the highest one
// seen is taken as being after a wrap, as RFC 3550 does.
type unwrapper struct {
	started bool
	highest int64
}

func (u *unwrapper) extend(seq uint16) int64 {
	if !u.started {
		u.started = true
		u.highest = int64(seq)
		return u.highest
	}
	delta := int64(int16(seq - uint16(u.highest)))
	ext := u.highest + delta
	u.highest = max(u.highest, ext)
	return ext
}
