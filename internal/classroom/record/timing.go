package record

import "math"

// Timing.
//
// Every time inside the recorder is in ms on its internal clock (since
// New). A track's RTP timestamps are unwrapped to 64 bits and mapped to
// that clock through an anchor, a pair (RTP timestamp, internal ms):
//
//   - until a sender report comes, the anchor is the arrival of the
//     packet that came soonest (against the RTP timestamps), since the
//     first packets of a track are often read in a burst, late (the
//     recorder holds a track's first frames until its first report, so
//     this is for senders that send none);
//   - with each RTCP sender report of the track, the anchor becomes the
//     report's (RTP timestamp, NTP time), the NTP time moved onto the
//     internal clock by an offset kept per publishing connection: the
//     largest NTP time minus arrival time of its reports and of its
//     packets (their NTP time from their track's report), that is, of
//     what took least time to arrive (anything held up on its way only
//     makes that difference smaller; packets, 50 a second, make up for a
//     report that came late).
//
// The tracks of one connection (a browser tab: its camera, microphone and
// screen) share the sender's NTP clock and the offset, so they keep the
// sync the sender gave them, however their RTP clocks drift against each
// other: the reports follow the drift (BBB #8815 lost about 10 s an hour
// without this). When the offset improves, all of the connection's tracks
// move together. What is left is the drift between the sender's clock and
// this server's, a few ppm, which shifts all of the connection's media
// alike against the event log.

// ntpMs converts a 64-bit NTP time to ms.
func ntpMs(ntp uint64) float64 {
	return float64(ntp>>32)*1000 + float64(ntp&0xffffffff)*1000/(1<<32)
}

// clock maps one track's RTP timestamps to the internal clock.
type clock struct {
	perMs float64 // RTP ticks per ms

	init    bool
	lastTS  uint32 // the newest timestamp seen and its unwrapped value
	lastExt int64

	anchored  bool
	anchorExt int64
	anchorMs  float64  // internal ms, or with off the sender's NTP ms
	off       *float64 // the connection's offset, once anchored on a report

	hasOut  bool
	lastOut int64 // the last time handed out, for monotony
}

func newClock(rate uint32) *clock {
	if rate == 0 {
		rate = 90000
	}
	return &clock{perMs: float64(rate) / 1000}
}

// reset forgets everything (after a long pause, when 32-bit timestamps may
// have wrapped more than once).
func (c *clock) reset() { *c = clock{perMs: c.perMs} }

// unwrap extends a timestamp to 64 bits against the newest one seen, which
// holds while they are less than 2^31 ticks apart (6.6 hours at 90 kHz).
func (c *clock) unwrap(ts uint32) int64 {
	if !c.init {
		c.init = true
		c.lastTS, c.lastExt = ts, int64(ts)
		return c.lastExt
	}
	ext := c.lastExt + int64(int32(ts-c.lastTS))
	if ext > c.lastExt {
		c.lastTS, c.lastExt = ts, ext
	}
	return ext
}

// packet notes a packet's timestamp and arrival (internal ms): until a
// sender report comes, a packet that arrives sooner than the anchor says
// becomes the anchor; after, a packet that arrives sooner than the
// connection's offset says improves the offset.
func (c *clock) packet(ts uint32, at float64) {
	ext := c.unwrap(ts)
	switch {
	case !c.anchored:
		c.anchored = true
		c.anchorExt, c.anchorMs = ext, at
	case c.off != nil:
		ntp := c.anchorMs + float64(ext-c.anchorExt)/c.perMs
		*c.off = max(*c.off, ntp-at)
	case at < c.anchorMs+float64(ext-c.anchorExt)/c.perMs:
		c.anchorExt, c.anchorMs = ext, at
	}
}

// report anchors the track on a sender report: the RTP timestamp ts was
// sampled at ntp (ms on the sender's clock), that is, at ntp - *off on the
// internal clock, whatever *off becomes.
func (c *clock) report(ts uint32, ntp float64, off *float64) {
	c.anchored = true
	c.anchorExt, c.anchorMs, c.off = c.unwrap(ts), ntp, off
}

// at returns the internal time of a timestamp, strictly after the last one
// returned (two frames never share a time, and a new anchor never moves a
// track back). The clock must be anchored.
func (c *clock) at(ts uint32) int64 {
	ext := c.unwrap(ts)
	base := c.anchorMs
	if c.off != nil {
		base -= *c.off
	}
	t := int64(math.Round(base + float64(ext-c.anchorExt)/c.perMs))
	if c.hasOut && t <= c.lastOut {
		t = c.lastOut + 1
	}
	c.hasOut, c.lastOut = true, t
	return t
}
