package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/at-wat/ebml-go"
	"github.com/at-wat/ebml-go/webm"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/lectern-lms/lectern/internal/classroom/sfu"
)

func testLogger() *slog.Logger {
	if os.Getenv("RECORD_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// memStorage keeps files in memory. With a budget, it is a disk that
// fills up: writes past budget bytes in all fail with ENOSPC.
type memStorage struct {
	mu         sync.Mutex
	files      map[string]*memFile
	budget     int64 // < 0: unlimited
	used       int64
	failCreate error
}

func newMemStorage() *memStorage { return &memStorage{files: map[string]*memFile{}, budget: -1} }

func (s *memStorage) Create(name string) (File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failCreate != nil {
		return nil, s.failCreate
	}
	if s.files[name] != nil {
		return nil, errors.New("exists")
	}
	f := &memFile{s: s, name: name}
	s.files[name] = f
	return f, nil
}

// data returns a copy of a file's bytes so far.
func (s *memStorage) data(name string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files[name]
	if f == nil {
		return nil
	}
	return slices.Clone(f.data)
}

func (s *memStorage) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.files))
}

type memFile struct {
	s      *memStorage
	name   string
	data   []byte // guarded by s.mu
	pos    int64
	closed bool
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) Write(p []byte) (int, error) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if f.closed {
		return 0, errors.New("closed")
	}
	n := len(p)
	var err error
	if grow := f.pos + int64(n) - int64(len(f.data)); grow > 0 && f.s.budget >= 0 {
		if left := f.s.budget - f.s.used; grow > left {
			n -= int(grow - max(left, 0))
			n = max(n, 0)
			err = &errorPath{syscall.ENOSPC}
		}
	}
	end := f.pos + int64(n)
	if end > int64(len(f.data)) {
		f.s.used += end - int64(len(f.data))
		f.data = append(f.data, make([]byte, end-int64(len(f.data)))...)
	}
	copy(f.data[f.pos:], p[:n])
	f.pos = end
	return n, err
}

// errorPath wraps an errno as os.PathError would.
type errorPath struct{ err error }

func (e *errorPath) Error() string { return "write: " + e.err.Error() }
func (e *errorPath) Unwrap() error { return e.err }

func (f *memFile) Seek(off int64, whence int) (int64, error) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	switch whence {
	case io.SeekStart:
		f.pos = off
	case io.SeekCurrent:
		f.pos += off
	case io.SeekEnd:
		f.pos = int64(len(f.data)) + off
	}
	return f.pos, nil
}

func (f *memFile) Close() error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.closed = true
	return nil
}

// webmFileDoc is a WebM file as ebml-go reads it.
type webmFileDoc struct {
	Header  webm.EBMLHeader `ebml:"EBML"`
	Segment webm.Segment    `ebml:"Segment"`
}

// block is a block read back, its time from the file's start.
type block struct {
	track uint64
	t     int64
	key   bool
	data  []byte
}

type parsed struct {
	doc      webmFileDoc
	blocks   []block
	duration float64
	cues     int
}

// readWebM parses a WebM file and checks what every file must satisfy:
// blocks in time order (strictly, per track), a video track starting on a
// keyframe. partial allows a file cut short.
func readWebM(t *testing.T, name string, b []byte, partial bool) parsed {
	t.Helper()
	var p parsed
	err := ebml.Unmarshal(bytes.NewReader(b), &p.doc)
	if err != nil && !(partial && errors.Is(err, io.ErrUnexpectedEOF)) {
		t.Fatalf("%s: %v", name, err)
	}
	if p.doc.Header.DocType != "webm" {
		t.Errorf("%s: doc type %q", name, p.doc.Header.DocType)
	}
	p.duration = p.doc.Segment.Info.Duration
	if p.doc.Segment.Cues != nil {
		p.cues = len(p.doc.Segment.Cues.CuePoint)
	}
	last := map[uint64]int64{}
	var prev int64 = -1
	for _, c := range p.doc.Segment.Cluster {
		for _, sb := range c.SimpleBlock {
			bl := block{track: sb.TrackNumber, t: int64(c.Timecode) + int64(sb.Timecode), key: sb.Keyframe, data: sb.Data[0]}
			if l, ok := last[bl.track]; ok && bl.t <= l {
				t.Errorf("%s: track %d: block at %d after %d", name, bl.track, bl.t, l)
			}
			if bl.t < prev {
				t.Errorf("%s: block at %d after one at %d", name, bl.t, prev)
			}
			last[bl.track], prev = bl.t, bl.t
			p.blocks = append(p.blocks, bl)
		}
	}
	for _, te := range p.doc.Segment.Tracks.TrackEntry {
		if te.CodecID != "V_VP8" {
			continue
		}
		for _, bl := range p.blocks {
			if bl.track == te.TrackNumber {
				if !bl.key {
					t.Errorf("%s: the first video block is not a keyframe", name)
				}
				break
			}
		}
	}
	return p
}

// codecs returns the codec ids of a file's tracks.
func (p parsed) codecs() []string {
	var ids []string
	for _, te := range p.doc.Segment.Tracks.TrackEntry {
		ids = append(ids, te.CodecID)
	}
	return ids
}

// trackNumber returns the number of the track with codec id.
func (p parsed) trackNumber(id string) uint64 {
	for _, te := range p.doc.Segment.Tracks.TrackEntry {
		if te.CodecID == id {
			return te.TrackNumber
		}
	}
	return 0
}

// fakeClock is a settable clock, in ms.
type fakeClock struct {
	base time.Time
	ms   atomic.Int64 // ns, in fact
}

func newFakeClock() *fakeClock {
	return &fakeClock{base: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time { return c.base.Add(time.Duration(c.ms.Load())) }
func (c *fakeClock) set(ms float64) { c.ms.Store(int64(ms * float64(time.Millisecond))) }
func (c *fakeClock) get() float64   { return float64(c.ms.Load()) / float64(time.Millisecond) }
func ntpOf(ms float64) uint64       { return uint64(ms/1000*(1<<32) + 0.5) }
func stamp(b []byte, capture float64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(capture*1000)) // µs
}

// captured reads the capture time (ms) a test frame carries at its end.
func captured(b []byte) float64 {
	return float64(binary.BigEndian.Uint64(b[len(b)-8:])) / 1000
}

// simTrack is a synthetic sender's track.
type simTrack struct {
	info   sfu.StreamInfo
	id     string
	video  bool
	seq    uint16
	ts0    uint32
	perMs  float64 // RTP ticks per ms of the sender's time (drift included)
	ssrc   uint32
	width  int
	height int
}

func (tr *simTrack) codec() webrtc.RTPCodecParameters {
	if tr.video {
		return webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, PayloadType: 96}
	}
	return webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, PayloadType: 111}
}

func (tr *simTrack) rtpTime(capture float64) uint32 {
	return tr.ts0 + uint32(int64(capture*tr.perMs+0.5))
}

// packets returns the packets of a frame captured at capture (ms).
func (tr *simTrack) packets(capture float64, key bool, size int) []*rtp.Packet {
	ts := tr.rtpTime(capture)
	var pkts []*rtp.Packet
	if tr.video {
		f := stamp(vp8Frame(key, tr.width, tr.height, 'v', size), capture)
		pkts = vp8Packets(f, tr.seq, ts, 1100)
	} else {
		pkts = []*rtp.Packet{{Header: rtp.Header{Version: 2, SequenceNumber: tr.seq, Timestamp: ts}, Payload: stamp([]byte{0x78}, capture)}}
	}
	for _, p := range pkts {
		p.SSRC = tr.ssrc
	}
	tr.seq += uint16(len(pkts))
	return pkts
}

// report returns the sender report of a sender whose clock reads
// sender(ms) at our ms.
func (tr *simTrack) report(at float64, sender func(float64) float64) rtcp.SenderReport {
	return rtcp.SenderReport{SSRC: tr.ssrc, NTPTime: ntpOf(sender(at)), RTPTime: tr.rtpTime(at)}
}

// drain waits until the recorder's queue is short, so that a test feeding
// it faster than real time never has packets dropped.
func drain(r *Recorder) {
	for {
		r.qmu.Lock()
		n := r.queued
		r.qmu.Unlock()
		if n < maxQueued/4 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
