package record

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
)

// Reordering.
const (
	// maxWait is how long (in arrival time, ms) a missing packet is waited
	// for, time for a retransmission, before it counts as lost.
	maxWait = 500
	// videoSlots and audioSlots bound the packets a track holds while
	// waiting; a screen share keyframe can take a few hundred packets.
	videoSlots = 2048
	audioSlots = 256
	// maxLate is how far (in packets) behind the playout point a packet
	// may arrive and be dropped as late; beyond that the sender has
	// restarted its sequence numbers and the assembler starts over.
	maxLate = 1000
)

// frame is a whole VP8 frame or Opus packet.
type frame struct {
	ts            uint32 // RTP timestamp
	data          []byte
	key           bool // a VP8 keyframe (every Opus packet counts as one)
	width, height int  // of a VP8 keyframe
	lost          bool // packets were lost just before it
}

// slot is a buffered packet.
type slot struct {
	ok     bool
	ts     uint32
	marker bool
	start  bool   // VP8: the first packet of a frame
	data   []byte // the payload without the VP8 descriptor; nil for padding
}

// assembler puts one track's packets back in order and into frames. A
// missing packet is waited for up to maxWait; then it is skipped, and the
// next frame says lost (a VP8 frame missing a packet is dropped whole).
type assembler struct {
	video    bool
	slots    []slot
	started  bool
	fresh    bool  // nothing used yet: an earlier packet may still come first
	flushing bool  // waiting for nothing
	head     int64 // extended sequence number of the next packet to use
	highest  int64
	newest   float64 // the latest arrival
	blocked  bool    // waiting at head for a missing packet, since blocked0
	blocked0 float64
	lost     bool
	// Counters, shared with the recorder: packets given up on, and
	// packets that came after their turn.
	lostN, lateN *atomic.Uint64
}

func newAssembler(video bool) *assembler {
	n := audioSlots
	if video {
		n = videoSlots
	}
	return &assembler{video: video, slots: make([]slot, n), lostN: new(atomic.Uint64), lateN: new(atomic.Uint64)}
}

// reset drops everything buffered; the next packet starts afresh.
func (a *assembler) reset() {
	clear(a.slots)
	a.started, a.blocked, a.fresh = false, false, false
	a.newest = 0
	a.lost = true
}

func (a *assembler) slot(ext int64) *slot { return &a.slots[ext&int64(len(a.slots)-1)] }

// push adds a packet that arrived at internal time at, and passes every
// frame it completes to emit.
func (a *assembler) push(p *rtp.Packet, at float64, emit func(frame)) {
	s := slot{ok: true, ts: p.Timestamp, marker: p.Marker}
	if len(p.Payload) > 0 {
		if a.video {
			var vp codecs.VP8Packet
			data, err := vp.Unmarshal(p.Payload)
			if err != nil {
				return // not VP8; counts as lost when its turn comes
			}
			s.data, s.start = data, vp.S == 1 && vp.PID == 0
		} else {
			s.data = p.Payload
		}
	}
	if !a.started {
		a.started, a.fresh = true, true
		a.head = int64(p.SequenceNumber)
		a.highest = a.head
	}
	ext := a.highest + int64(int16(p.SequenceNumber-uint16(a.highest)))
	n := int64(len(a.slots))
	switch {
	case ext < a.head && a.fresh && a.highest-ext < n:
		a.head = ext // it came before the first one
	case ext < a.head && a.head-ext <= maxLate:
		a.lateN.Add(1)
		return
	case ext < a.head || ext-a.head >= 2*n:
		// The sender jumped: start over from this packet.
		a.lostN.Add(uint64(a.highest - a.head + 1))
		clear(a.slots)
		a.head, a.highest, a.blocked, a.fresh, a.lost = ext, ext, false, false, true
	}
	for ext-a.head >= n {
		a.skip()
	}
	*a.slot(ext) = s
	a.highest = max(a.highest, ext)
	a.newest = max(a.newest, at)
	a.drain(emit)
}

// skip gives up the packet at head. The wait, if any, goes on: once a
// gap has been waited for, the packets missing after it are not.
func (a *assembler) skip() {
	sl := a.slot(a.head)
	if !sl.ok {
		a.lostN.Add(1)
	}
	*sl = slot{}
	a.head++
	a.lost = true
	a.fresh = false
}

// used moves past the packets up to end, used or padding.
func (a *assembler) used(end int64) {
	for ; a.head <= end; a.head++ {
		*a.slot(a.head) = slot{}
	}
	a.blocked, a.fresh = false, false
}

// waited reports whether the gap at head has been waited for long enough,
// starting the wait if it has not begun.
func (a *assembler) waited() bool {
	if a.flushing {
		return true
	}
	if !a.blocked {
		a.blocked, a.blocked0 = true, a.newest
	}
	return a.newest-a.blocked0 > maxWait
}

// drain emits every frame that can be.
func (a *assembler) drain(emit func(frame)) {
	for a.head <= a.highest {
		s := a.slot(a.head)
		switch {
		case !s.ok:
			if !a.waited() {
				return
			}
			a.skip()
		case s.data == nil: // padding
			a.used(a.head)
		case !a.video:
			f := frame{ts: s.ts, data: s.data, key: true, lost: a.lost}
			a.lost = false
			a.used(a.head)
			emit(f)
		case !s.start:
			// The frame's beginning is lost (or, at first, may still
			// come).
			if a.fresh && !a.waited() {
				return
			}
			a.skip()
		default:
			if !a.drainVP8(emit) {
				return
			}
		}
	}
}

// drainVP8 emits the VP8 frame that starts at head if it is complete, or
// drops it if a packet of it is lost. It returns false to wait for more.
func (a *assembler) drainVP8(emit func(frame)) bool {
	ts := a.slot(a.head).ts
	end := a.head
	for {
		if end > a.highest {
			return false
		}
		s := a.slot(end)
		if !s.ok {
			if !a.waited() {
				return false
			}
			for a.head <= end {
				a.skip() // the frame is incomplete
			}
			return true
		}
		if s.data == nil && end > a.head {
			// Padding amid the frame's packets (a sender's pacer may
			// send some between them, with another timestamp): it ends
			// nothing.
			end++
			continue
		}
		if s.ts != ts || s.start && end > a.head {
			end-- // the next frame began: this one ended without a marker
			break
		}
		if s.marker {
			break
		}
		end++
	}
	var data []byte
	for i := a.head; i <= end; i++ {
		data = append(data, a.slot(i).data...)
	}
	a.used(end)
	f := frame{ts: ts, data: data, lost: a.lost}
	f.key, f.width, f.height = vp8Keyframe(data)
	a.lost = false
	emit(f)
	return true
}

// flush emits what is complete and drops the rest (the track ended).
func (a *assembler) flush(emit func(frame)) {
	a.flushing = true
	a.drain(emit)
	a.flushing = false
	a.reset()
}

// vp8Whole reports whether a VP8 frame holds at least its frame header and
// first partition, whose size its 3-byte frame tag gives (RFC 6386,
// section 9.1): a frame cut short (a packet of it lost yet the frame taken
// as whole) is refused rather than written, where decoders fail on it.
func vp8Whole(b []byte) bool {
	if len(b) < 3 {
		return false
	}
	header := 3
	if b[0]&1 == 0 {
		header = 10 // a keyframe: start code, width and height follow
	}
	first := int(uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16) >> 5
	return len(b) >= header+first
}

// vp8Keyframe reports whether a VP8 frame is a keyframe, and its size
// (RFC 6386, section 9.1: a 3-byte frame tag whose lowest bit is 0 for
// keyframes, the start code 9d 01 2a, then 14-bit width and height).
func vp8Keyframe(b []byte) (key bool, width, height int) {
	if len(b) < 10 || b[0]&1 != 0 || b[3] != 0x9d || b[4] != 0x01 || b[5] != 0x2a {
		return false, 0, 0
	}
	w := binary.LittleEndian.Uint16(b[6:8]) & 0x3fff
	h := binary.LittleEndian.Uint16(b[8:10]) & 0x3fff
	return true, int(w), int(h)
}
