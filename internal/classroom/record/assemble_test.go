package record

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
)

// vp8Frame returns a VP8 frame: a keyframe with a real frame header for
// width x height, or an interframe; tag marks its content.
func vp8Frame(key bool, width, height int, tag byte, size int) []byte {
	b := make([]byte, max(size, 10))
	for i := range b {
		b[i] = tag
	}
	if key {
		b[0], b[1], b[2] = 0x10, 0x02, 0x00 // keyframe, version 0, shown
		b[3], b[4], b[5] = 0x9d, 0x01, 0x2a
		b[6], b[7] = byte(width), byte(width>>8)
		b[8], b[9] = byte(height), byte(height>>8)
	} else {
		b[0], b[1], b[2] = 0x11, 0, 0 // interframe, shown, an empty first partition
	}
	return b
}

// vp8Packets packetizes a frame as a browser does (descriptor, marker on
// the last packet) with packets of at most mtu bytes.
func vp8Packets(frame []byte, seq uint16, ts uint32, mtu uint16) []*rtp.Packet {
	var pay codecs.VP8Payloader
	var out []*rtp.Packet
	payloads := pay.Payload(mtu, frame)
	for i, p := range payloads {
		out = append(out, &rtp.Packet{
			Header:  rtp.Header{Version: 2, SequenceNumber: seq + uint16(i), Timestamp: ts, Marker: i == len(payloads)-1},
			Payload: p,
		})
	}
	return out
}

func TestVP8Keyframe(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		key  bool
		w, h int
	}{
		{"keyframe", vp8Frame(true, 640, 480, 0, 20), true, 640, 480},
		{"scaled keyframe", func() []byte { b := vp8Frame(true, 1280, 720, 0, 20); b[7] |= 0x40; b[9] |= 0x80; return b }(), true, 1280, 720},
		{"interframe", vp8Frame(false, 0, 0, 0, 20), false, 0, 0},
		{"short", []byte{0x10, 0x02, 0x00, 0x9d, 0x01}, false, 0, 0},
		{"bad start code", []byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2b, 0x80, 0x02, 0xe0, 0x01}, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, w, h := vp8Keyframe(tt.b)
			if key != tt.key || w != tt.w || h != tt.h {
				t.Errorf("got %v %dx%d, want %v %dx%d", key, w, h, tt.key, tt.w, tt.h)
			}
		})
	}
}

// collect pushes packets (arriving 1 ms apart from at) and returns the
// frames, as "ts:tag" with "+key" and "+lost".
func collect(a *assembler, pkts []*rtp.Packet, at float64) []string {
	var out []string
	emit := func(f frame) {
		s := fmt.Sprintf("%d:%c", f.ts, f.data[len(f.data)-1])
		if f.key && a.video {
			s += "+key"
		}
		if f.lost {
			s += "+lost"
		}
		out = append(out, s)
	}
	for i, p := range pkts {
		a.push(p, at+float64(i), emit)
	}
	return out
}

// renumber gives packets consecutive sequence numbers from the first's,
// as a sender that inserted some would.
func renumber(pkts []*rtp.Packet) []*rtp.Packet {
	out := make([]*rtp.Packet, len(pkts))
	for i, p := range pkts {
		c := *p
		c.SequenceNumber = pkts[0].SequenceNumber + uint16(i)
		out[i] = &c
	}
	return out
}

func TestAssembleVP8(t *testing.T) {
	// Three frames of three packets each; sequence numbers wrap.
	var seq0 uint16 = 65530
	var frames [][]*rtp.Packet
	for i := range 3 {
		f := vp8Frame(i == 0, 320, 240, byte('a'+i), 2500)
		frames = append(frames, vp8Packets(f, seq0+uint16(3*i), uint32(1000+3000*i), 1000))
	}
	all := slices.Concat(frames...)
	if len(all) != 9 {
		t.Fatalf("%d packets, want 9", len(all))
	}
	pick := func(idx ...int) []*rtp.Packet {
		var out []*rtp.Packet
		for _, i := range idx {
			out = append(out, all[i])
		}
		return out
	}
	padding := &rtp.Packet{Header: rtp.Header{SequenceNumber: seq0 + 9, Timestamp: 7000}}
	late := &rtp.Packet{Header: rtp.Header{SequenceNumber: seq0 + 10, Timestamp: 10000, Marker: true}, Payload: []byte{0x10, 0x11, 'x'}}
	tests := []struct {
		name string
		pkts []*rtp.Packet
		want []string
	}{
		{"in order", all, []string{"1000:a+key", "4000:b", "7000:c"}},
		{"reordered", pick(1, 0, 2, 5, 4, 3, 8, 6, 7), []string{"1000:a+key", "4000:b", "7000:c"}},
		{"padding between frames", append(slices.Clone(all), padding, late), []string{"1000:a+key", "4000:b", "7000:c", "10000:x"}},
		{"duplicate", pick(0, 1, 1, 2, 3, 4, 5), []string{"1000:a+key", "4000:b"}},
		{"starts mid-frame", pick(1, 2, 3, 4, 5), nil}, // waiting for packet 0
		// Packet 4 never comes: frame b is dropped once 500 ms have passed.
		{"lost packet", pick(0, 1, 2, 3, 5, 6, 7, 8), []string{"1000:a+key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAssembler(true)
			got := collect(a, tt.pkts, 0)
			if !slices.Equal(got, tt.want) {
				t.Errorf("frames %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("loss given up after maxWait", func(t *testing.T) {
		a := newAssembler(true)
		got := collect(a, pick(0, 1, 2, 3, 5, 6, 7, 8), 0)
		// The next frame, 600 ms later, frees the wait.
		f := vp8Packets(vp8Frame(false, 0, 0, 'd', 100), seq0+9, 10000, 1000)
		got = append(got, collect(a, f, 600)...)
		want := []string{"1000:a+key", "7000:c+lost", "10000:d"}
		if !slices.Equal(got, want) {
			t.Errorf("frames %q, want %q", got, want)
		}
		if n := a.lostN.Load(); n != 1 {
			t.Errorf("%d lost, want 1", n)
		}
	})

	t.Run("starts mid-frame", func(t *testing.T) {
		a := newAssembler(true)
		got := collect(a, pick(1, 2, 3, 4, 5), 0)
		got = append(got, collect(a, pick(6, 7, 8), 600)...)
		want := []string{"4000:b+lost", "7000:c"}
		if !slices.Equal(got, want) {
			t.Errorf("frames %q, want %q", got, want)
		}
	})

	t.Run("late packet", func(t *testing.T) {
		a := newAssembler(true)
		got := collect(a, pick(0, 1, 2, 3, 5, 6, 7, 8), 0)
		more := vp8Packets(vp8Frame(false, 0, 0, 'd', 100), seq0+9, 10000, 1000)
		got = append(got, collect(a, more, 600)...)
		got = append(got, collect(a, pick(4), 700)...)
		if a.lateN.Load() != 1 || len(got) != 3 {
			t.Errorf("frames %q, %d late; want 3 frames and 1 late", got, a.lateN.Load())
		}
	})

	t.Run("flush", func(t *testing.T) {
		a := newAssembler(true)
		// Two gaps: packet 4 (frame b) and packet 10 (frame d).
		d := vp8Packets(vp8Frame(false, 0, 0, 'd', 2500), seq0+9, 10000, 1000)
		e := vp8Packets(vp8Frame(false, 0, 0, 'e', 100), seq0+12, 13000, 1000)
		got := collect(a, slices.Concat(pick(0, 1, 2, 3, 5, 6, 7, 8), d[:1], d[2:], e), 0)
		a.flush(func(f frame) { got = append(got, fmt.Sprintf("%d:%c", f.ts, f.data[len(f.data)-1])) })
		want := []string{"1000:a+key", "7000:c", "13000:e"}
		if !slices.Equal(got, want) {
			t.Errorf("frames %q, want %q", got, want)
		}
	})

	t.Run("sender restart", func(t *testing.T) {
		a := newAssembler(true)
		got := collect(a, pick(0, 1, 2), 0)
		f := vp8Packets(vp8Frame(true, 320, 240, 'z', 100), 20000, 50000, 1000)
		got = append(got, collect(a, f, 10)...)
		want := []string{"1000:a+key", "50000:z+key+lost"}
		if !slices.Equal(got, want) {
			t.Errorf("frames %q, want %q", got, want)
		}
	})

	t.Run("frame data", func(t *testing.T) {
		a := newAssembler(true)
		f := vp8Frame(true, 320, 240, 'k', 2500)
		var got frame
		for _, p := range vp8Packets(f, 1, 90, 1000) {
			a.push(p, 0, func(fr frame) { got = fr })
		}
		if !bytes.Equal(got.data, f) || !got.key || got.width != 320 || got.height != 240 {
			t.Errorf("frame %v %dx%d, %d bytes; want the 320x240 keyframe of %d bytes", got.key, got.width, got.height, len(got.data), len(f))
		}
	})
}

func TestAssembleOpus(t *testing.T) {
	pkt := func(seq uint16, tag byte) *rtp.Packet {
		return &rtp.Packet{Header: rtp.Header{SequenceNumber: seq, Timestamp: uint32(seq) * 960}, Payload: []byte{0x78, tag}}
	}
	tests := []struct {
		name string
		pkts []*rtp.Packet
		want []string
	}{
		{"in order", []*rtp.Packet{pkt(1, 'a'), pkt(2, 'b'), pkt(3, 'c')}, []string{"960:a", "1920:b", "2880:c"}},
		{"reordered", []*rtp.Packet{pkt(1, 'a'), pkt(3, 'c'), pkt(2, 'b')}, []string{"960:a", "1920:b", "2880:c"}},
		{"gap waits", []*rtp.Packet{pkt(1, 'a'), pkt(3, 'c'), pkt(4, 'd')}, []string{"960:a"}},
		{"padding", []*rtp.Packet{pkt(1, 'a'), {Header: rtp.Header{SequenceNumber: 2}}, pkt(3, 'c')}, []string{"960:a", "2880:c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(newAssembler(false), tt.pkts, 0)
			if !slices.Equal(got, tt.want) {
				t.Errorf("frames %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("gap given up", func(t *testing.T) {
		a := newAssembler(false)
		got := collect(a, []*rtp.Packet{pkt(1, 'a'), pkt(3, 'c')}, 0)
		got = append(got, collect(a, []*rtp.Packet{pkt(4, 'd')}, 502)...)
		want := []string{"960:a", "2880:c+lost", "3840:d"}
		if !slices.Equal(got, want) {
			t.Errorf("frames %q, want %q", got, want)
		}
	})
}

// TestAssemblePaddingAmidFrame: a pacer's padding packet (with another
// timestamp) between two packets of a frame does not cut the frame short.
func TestAssemblePaddingAmidFrame(t *testing.T) {
	a := vp8Frame(true, 320, 240, 'a', 2500)
	b := vp8Frame(false, 0, 0, 'b', 2500)
	pa, pb := vp8Packets(a, 100, 1000, 1000), vp8Packets(b, 0, 4000, 1000)
	pad := &rtp.Packet{Header: rtp.Header{Version: 2, Timestamp: 1000}}
	pkts := renumber(slices.Concat(pa, pb[:2], []*rtp.Packet{pad}, pb[2:]))
	var got [][]byte
	asm := newAssembler(true)
	for i, p := range pkts {
		asm.push(p, float64(i), func(f frame) { got = append(got, f.data) })
	}
	if len(got) != 2 || !bytes.Equal(got[0], a) || !bytes.Equal(got[1], b) {
		lens := []int{}
		for _, g := range got {
			lens = append(lens, len(g))
		}
		t.Fatalf("frames of %v bytes, want the two whole frames of %d and %d", lens, len(a), len(b))
	}
}

func TestVP8Whole(t *testing.T) {
	key := vp8Frame(true, 320, 240, 'k', 100) // first partition: 16 bytes
	inter := vp8Frame(false, 0, 0, 'i', 100)
	tag := 0x11 | 90<<5 // shown interframe, first partition 90 bytes
	inter[0], inter[1], inter[2] = byte(tag), byte(tag>>8), byte(tag>>16)
	tests := []struct {
		name string
		b    []byte
		want bool
	}{
		{"keyframe", key, true},
		{"keyframe cut in its header", key[:9], false},
		{"keyframe with just its first partition", key[:26], true},
		{"keyframe cut in its first partition", key[:25], false},
		{"interframe", inter, true},
		{"interframe with just its first partition", inter[:93], true},
		{"interframe cut in its first partition", inter[:92], false},
		{"two bytes", []byte{0x11, 0}, false},
	}
	for _, tt := range tests {
		if got := vp8Whole(tt.b); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
