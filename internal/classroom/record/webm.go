package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/at-wat/ebml-go/mkvcore"
	"github.com/at-wat/ebml-go/webm"
)

// WebM layout.
const (
	// cuesSize is the room reserved for the Cues of a file. A cue point
	// takes about 20 bytes and there is one per cluster (a video keyframe,
	// at least every KeyframeInterval, or 5 s of audio), so 32 KiB index
	// over 4 hours at one cue per 10 s; beyond that, ebml-go keeps every
	// other cue.
	cuesSize = 32 << 10
	// audioCluster is the length of an audio-only file's clusters, in ms.
	audioCluster = 5000
	// bufferSize is how much a file buffers before writing to storage
	// (besides the flush every second).
	bufferSize = 64 << 10
	// opusSeekPreRoll is the Matroska SeekPreRoll for Opus, in ns.
	opusSeekPreRoll = 80_000_000
)

// sink buffers a File for ebml-go's writer goroutine and the recorder's,
// and keeps the first write error: ebml-go never sees an error (it would
// panic or stop reading its channel, blocking the recorder), while the
// recorder checks Err after each frame and each flush.
type sink struct {
	mu      sync.Mutex
	f       File
	buf     []byte
	written int64 // bytes handed to f
	head    []byte
	err     error
	closed  bool
}

func newSink(f File) *sink { return &sink{f: f, buf: make([]byte, 0, bufferSize)} }

// headSize is how many of a file's first bytes are kept to find the
// Duration element in (the header is well under this).
const headSize = 4096

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.closed {
		return len(p), nil
	}
	if n := headSize - len(s.head); n > 0 {
		s.head = append(s.head, p[:min(n, len(p))]...)
	}
	s.buf = append(s.buf, p...)
	if len(s.buf) >= bufferSize {
		s.flushLocked()
	}
	return len(p), nil
}

// WriteAt writes over bytes already written (ebml-go's Cues and Duration).
func (s *sink) WriteAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeAtLocked(p, off)
	return len(p), nil
}

func (s *sink) writeAtLocked(p []byte, off int64) {
	s.flushLocked()
	if s.err != nil || s.closed {
		return
	}
	if off < 0 || off+int64(len(p)) > s.written {
		s.err = errors.New("record: write past the end of a file")
		return
	}
	if wa, ok := s.f.(io.WriterAt); ok {
		_, s.err = wa.WriteAt(p, off)
		return
	}
	if _, s.err = s.f.Seek(off, io.SeekStart); s.err != nil {
		return
	}
	if _, s.err = s.f.Write(p); s.err != nil {
		return
	}
	_, s.err = s.f.Seek(0, io.SeekEnd)
}

func (s *sink) flushLocked() {
	if s.err != nil || s.closed || len(s.buf) == 0 {
		return
	}
	n, err := s.f.Write(s.buf)
	s.written += int64(n)
	if err == nil && n < len(s.buf) {
		err = io.ErrShortWrite
	}
	s.buf = s.buf[:0]
	s.err = err
}

// Flush writes the buffer to the file.
func (s *sink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked()
	return s.err
}

// Close flushes and closes the file; ebml-go calls it when finishing.
func (s *sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.flushLocked()
	s.closed = true
	if err := s.f.Close(); s.err == nil {
		s.err = err
	}
	return nil
}

// Err returns the first error of the file.
func (s *sink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// setErr records an error (ebml-go's fatal handler).
func (s *sink) setErr(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// Written returns the bytes written to the file so far.
func (s *sink) Written() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// durationPos returns where the 8-byte Duration float of the header is, or
// -1. ebml-go writes the element as ID 0x4489, size 0x88, float64.
func (s *sink) durationPos() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := bytes.Index(s.head, []byte{0x44, 0x89, 0x88}); i >= 0 {
		return int64(i) + 3
	}
	return -1
}

// flushDuration writes the buffer to the file, then sets the header's
// Duration to ms, so that a file cut short by a crash still tells its
// length (to within a second).
func (s *sink) flushDuration(pos int64, ms float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked()
	if pos >= 0 {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], math.Float64bits(ms))
		s.writeAtLocked(b[:], pos)
	}
	return s.err
}

// webmFile is one WebM file being written: a VP8 track, an Opus track, or
// both (video is track 1).
type webmFile struct {
	sink   *sink
	ws     []webm.BlockWriteCloser
	video  int // index in ws, or -1
	audio  int
	durPos int64

	blocks bool     // one was written
	first  int64    // file time of the first block
	last   int64    // of the last block
	lastOf [2]int64 // of the last block of each track
}

// fileSpec describes a file to open.
type fileSpec struct {
	video         bool
	width, height int
	audio         bool
	channels      int
	date          time.Time
}

// openWebM writes a WebM header for spec to f. Blocks go to the file as
// they are written, in unknown-size clusters, so that the file plays up to
// the last one flushed; Close fills in the Cues and the Duration.
func openWebM(f File, spec fileSpec) (*webmFile, error) {
	s := newSink(f)
	w := &webmFile{sink: s, video: -1, audio: -1, lastOf: [2]int64{math.MinInt64, math.MinInt64}}
	var tracks []webm.TrackEntry
	if spec.video {
		w.video = len(tracks)
		tracks = append(tracks, webm.TrackEntry{
			Name:        "video",
			TrackNumber: uint64(len(tracks) + 1),
			TrackUID:    rand.Uint64N(math.MaxInt64) + 1,
			CodecID:     "V_VP8",
			TrackType:   1,
			Video:       &webm.Video{PixelWidth: uint64(spec.width), PixelHeight: uint64(spec.height)},
		})
	}
	if spec.audio {
		w.audio = len(tracks)
		tracks = append(tracks, webm.TrackEntry{
			Name:         "audio",
			TrackNumber:  uint64(len(tracks) + 1),
			TrackUID:     rand.Uint64N(math.MaxInt64) + 1,
			CodecID:      "A_OPUS",
			TrackType:    2,
			CodecPrivate: opusHead(spec.channels),
			SeekPreRoll:  opusSeekPreRoll,
			Audio:        &webm.Audio{SamplingFrequency: 48000, Channels: uint64(spec.channels)},
		})
	}
	cluster := mkvcore.WithMinMaxClusterDuration(1, 0, 0x7fff) // a cluster at each video keyframe
	if !spec.video {
		cluster = mkvcore.WithMinMaxClusterDuration(1, audioCluster, audioCluster)
	}
	ws, err := webm.NewSimpleBlockWriter(s, tracks,
		// A fresh Info per file: ebml-go sets its Duration.
		mkvcore.WithSegmentInfo(&webm.Info{TimecodeScale: 1_000_000, MuxingApp: "Lectern", WritingApp: "Lectern", DateUTC: spec.date}),
		mkvcore.WithSeekHead(true),
		mkvcore.WithCues(cuesSize),
		// Frames come sorted across tracks already (worker.release).
		mkvcore.WithBlockInterceptor(nil),
		cluster,
		mkvcore.WithOnFatalHandler(s.setErr),
	)
	if err == nil {
		err = s.Err()
	}
	if err != nil {
		for _, bw := range ws {
			bw.Close()
		}
		s.Close()
		return nil, err
	}
	w.ws = ws
	w.durPos = s.durationPos()
	return w, nil
}

// opusHead is the Opus identification header that Matroska takes as
// CodecPrivate (RFC 7845, section 5.1): no pre-skip, since the recording
// starts inside a running stream.
func opusHead(channels int) []byte {
	b := []byte("OpusHead")
	b = append(b, 1, byte(channels))
	b = binary.LittleEndian.AppendUint16(b, 0)     // pre-skip
	b = binary.LittleEndian.AppendUint32(b, 48000) // input sample rate
	b = binary.LittleEndian.AppendUint16(b, 0)     // output gain
	return append(b, 0)                            // channel mapping family
}

// write adds a block at file time t (ms). Blocks come in time order; a
// track's times are made strictly increasing.
func (w *webmFile) write(video, key bool, t int64, data []byte) error {
	i := w.audio
	if video {
		i = w.video
	}
	if t <= w.lastOf[i] {
		t = w.lastOf[i] + 1
	}
	w.lastOf[i] = t
	if !w.blocks {
		w.blocks, w.first = true, t
	}
	w.last = max(w.last, t)
	// Write returns once ebml-go's goroutine has the frame; its write
	// error shows in the sink.
	if _, err := w.ws[i].Write(key, t, data); err != nil {
		w.sink.setErr(err)
	}
	return w.sink.Err()
}

// duration returns the file's length so far in ms.
func (w *webmFile) duration() int64 {
	if !w.blocks {
		return 0
	}
	return w.last - w.first
}

// flush writes what is buffered and the Duration so far.
func (w *webmFile) flush() error {
	return w.sink.flushDuration(w.durPos, float64(w.duration()))
}

// close finishes the file (Cues, Duration) and closes it.
func (w *webmFile) close() error {
	for _, bw := range w.ws {
		bw.Close() // the last one waits until ebml-go has finished the file
	}
	w.sink.Close()
	return w.sink.Err()
}
