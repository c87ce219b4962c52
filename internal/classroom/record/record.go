// Package record records a live class: every published stream to WebM, as
// sent (VP8 and Opus, no transcoding), and an event log of the sitting.
//
// A Recorder is a hidden participant of the room: it implements sfu.Tap, so
// the SFU hands it every packet of every stream in process, and it asks
// publishers for keyframes through sfu.Room.RequestKeyframe.
//
// # Files
//
// Each publisher stream gets one WebM file per recording segment (camera:
// VP8; mic: Opus; screen: VP8 and, if the screen has sound, Opus). When a
// stream ends (a camera turned off), its file stays open for the
// publisher's next stream of the same label in the segment (or, with
// Join, the recording), which goes on in it with the time between cut
// out, so that a publisher's camera is one file. Files are named
//
//	<user>-<label>-<stream>-<segment>-<n>.webm
//
// where n counts the recording's files from 1. A file starts on a VP8
// keyframe (audio-only files on their first packet), and a stream starts a
// new file only when its screen sound starts: a change of picture size (a
// camera's resolution ramps up in its first seconds) goes on in the same
// file, since each VP8 keyframe carries its size and players follow it
// (the track's header has the first size, FileInfo the largest). The
// files are written to Storage as the media arrives (flushed every second)
// and finished on Pause, Stop or the stream's end: a crash loses at most
// the last couple of seconds (up to 5 at a stream's start, see Time), and
// what was written plays, with a Duration a second short at most.
//
// Besides, EventsFile ("events.jsonl") holds one JSON object a line:
// {"t": ms on the recording clock, "type": kind, ...}, in time order. The
// recorder writes "recording" lines (action start, with the wall-clock
// time "at" of recording time 0; pause; resume; stop) and "file" lines
// (action open, with the file's name, stream, user, label, kinds, segment,
// width, height and "start" time; action close, with its "end" time,
// duration and size), so that the log tells what the files are even if
// the recording never reached Stop. The room service adds the rest with
// Event.
//
// # Time
//
// The recording clock counts ms from Start, pauses included. Every time
// in FileInfo and the event log is on it. Blocks in a file are timed from
// RTP timestamps, synchronised through RTCP sender reports (see
// timing.go), so that a file's block at time b (from the file's start)
// shows what was captured at StartMs+b on the recording clock, within a
// few ms for every stream of one publishing connection. A track's first
// frames wait for its first sender report (at most 5 s), which times them
// too.
//
// # Segments
//
// Start begins segment 0, Pause ends a segment and Resume begins the next.
// By default (isVideo=0) Pause finishes the files and Resume starts new
// ones, so that each segment is a recording of its own. With Options.Join
// (isVideo=1), a stream keeps one file across pauses and the paused time
// is cut out of it (FileInfo.Spans tells which stretches of the recording
// clock it holds), so that the sitting makes one continuous recording.
//
// # Errors
//
// Recording never holds up the class: the tap methods only queue (packets
// are dropped, as lost, when the queue is full), and a write error (a full
// disk) stops the recording, reports the error to Options.OnError and
// leaves the class running.
package record

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/lectern-lms/lectern/internal/classroom/sfu"
)

// Limits.
const (
	// maxQueued is how many packets may wait for the recorder's
	// goroutine (about a second of a large class) before new ones are
	// dropped.
	maxQueued = 8192
	// mergeDelay is how far (ms) a stream's video may run ahead of its
	// audio, or the reverse, while waiting for the other to interleave.
	mergeDelay = 500
	// keyframeRetry is how often (ms of media) a keyframe is asked for
	// again while a track waits for one.
	keyframeRetry = 1000
	// longPause is a pause after which a track's RTP clock starts over
	// (32-bit timestamps may have wrapped).
	longPause = time.Hour
	// maxHold is how long (ms of arrival) a track's first frames wait for
	// its first sender report, which times them right (browsers send one
	// every second for video, every 5 s for audio).
	maxHold = 5000
	// parkTail is how long (ms) the last frame of a stream that ended
	// lasts in its file, when the file goes on with the publisher's next
	// stream.
	parkTail = 20
	// DefaultKeyframeInterval is the default Options.KeyframeInterval.
	DefaultKeyframeInterval = 10 * time.Second
)

// Options configure a Recorder.
type Options struct {
	// Join keeps one file per stream across pauses (isVideo=1).
	Join bool
	// RequestKeyframe asks a stream's publisher for a keyframe
	// (sfu.Room.RequestKeyframe). It is called from the recorder's
	// goroutine and must not block. nil: never asked; each video file
	// then starts at the publisher's next keyframe.
	RequestKeyframe func(streamID string)
	// OnError is told, once and in a goroutine of its own, that the
	// recording stopped because of a storage error. Stop still has to be
	// called; it returns the files finished and the error.
	OnError func(error)
	// KeyframeInterval is the longest stretch of video without a keyframe:
	// past it the recorder asks for one, so that players can seek. 0
	// means DefaultKeyframeInterval; negative, never.
	KeyframeInterval time.Duration
	// Now returns the current time; nil means time.Now. For tests.
	Now func() time.Time
	// Logger receives warnings; nil means slog.Default().
	Logger *slog.Logger
}

// FileInfo describes a finished file.
type FileInfo struct {
	Name     string   // as created in the Storage
	StreamID string   // the server's stream id (the first, if the file went on with the next stream)
	UserID   string   // the publisher
	Label    string   // "camera", "mic", "screen" or "recording" (the teacher's tab)
	Kinds    []string // "video", "audio": the file's tracks
	// StartMs is the recording-clock time of the file's first block, and
	// DurationMs the time from its first block to its last.
	StartMs, DurationMs int64
	Width, Height       int   // of the video; 0 without
	Size                int64 // bytes written (after an error, maybe 0)
	// Segment is the segment the file began in (0 from Start, then one
	// more for each Resume).
	Segment int
	// Spans are the stretches of the recording clock the file holds, in
	// order, end to end in the file: one, unless the file went on across
	// a pause (Options.Join) or with the publisher's next stream of the
	// same label. Recording time t in Spans[i] is at file time
	// t-Spans[i].StartMs plus the lengths of the spans before i (a file
	// time at the end of a span is the start of the next one).
	Spans []Span
}

// Span is a stretch of the recording clock, in ms.
type Span struct {
	StartMs, EndMs int64
}

// Stats are a recorder's counters.
type Stats struct {
	Packets uint64 // RTP packets taken while recording
	Dropped uint64 // packets dropped because the queue was full
	Lost    uint64 // packets given up on as lost (after waiting maxWait)
	Late    uint64 // packets that came after their frame was done
	Frames  uint64 // blocks written
}

// ErrStopped is returned when the recording has been stopped.
var ErrStopped = errors.New("record: the recording has stopped")

type state int

const (
	idle state = iota
	recording
	paused
	failed
	stopped
)

// Recorder records one sitting. It implements sfu.Tap; its other methods
// are for the room service. All are safe for concurrent use, and all but
// Stop return at once.
type Recorder struct {
	st   Storage
	opts Options
	now  func() time.Time
	log  *slog.Logger
	base time.Time // the internal clock's zero
	wake chan struct{}
	done chan struct{}

	qmu    sync.Mutex // guards queue, queued and closed
	queue  []item
	queued int  // RTP items in queue
	closed bool // Stop is queued: nothing more is

	mu       sync.Mutex // guards the fields below
	state    state
	err      error     // why the recording failed
	t0       time.Time // Start
	segment  int
	pending  []byte // event lines waiting for the flush
	dropped  int    // events dropped
	stopping bool
	result   []FileInfo
	stopErr  error

	accepting                              atomic.Bool // RTP is queued
	packets, droppedN, lost, late, written atomic.Uint64
}

var _ sfu.Tap = (*Recorder)(nil)

// New returns a recorder writing to st. Its goroutine runs until Stop,
// which must be called even if the recording never started.
func New(st Storage, opts Options) *Recorder {
	r := &Recorder{
		st:   st,
		opts: opts,
		now:  opts.Now,
		log:  opts.Logger,
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	r.log = r.log.With("component", "record")
	r.base = r.now()
	w := &worker{
		r:       r,
		streams: make(map[string]*stream),
		tracks:  make(map[trackKey]*track),
		parked:  make(map[string]*recFile),
		conns:   make(map[string]*float64),
	}
	switch {
	case opts.KeyframeInterval == 0:
		w.keyEvery = DefaultKeyframeInterval.Milliseconds()
	case opts.KeyframeInterval > 0:
		w.keyEvery = max(opts.KeyframeInterval.Milliseconds(), keyframeRetry)
	}
	go w.run()
	return r
}

// ms returns t on the internal clock.
func (r *Recorder) ms(t time.Time) float64 { return float64(t.Sub(r.base)) / float64(time.Millisecond) }

// Start starts recording: segment 0 and the recording clock begin.
func (r *Recorder) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != idle {
		return r.stateErr("start")
	}
	r.state = recording
	r.t0 = r.now()
	r.logLocked(0, "recording", map[string]any{"action": "start", "segment": 0, "join": r.opts.Join, "at": r.t0.UTC().Format(time.RFC3339Nano)})
	r.enqueue(item{kind: itemCmd, cmd: cmdStart, at: r.ms(r.t0)})
	r.accepting.Store(true)
	return nil
}

// Pause ends the current segment. Without Join, the files are finished.
func (r *Recorder) Pause() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != recording {
		return r.stateErr("pause")
	}
	r.state = paused
	r.accepting.Store(false)
	now := r.now()
	r.logLocked(r.sinceStart(now), "recording", map[string]any{"action": "pause", "segment": r.segment})
	r.enqueue(item{kind: itemCmd, cmd: cmdPause, at: r.ms(now)})
	return nil
}

// Resume begins a new segment. Without Join, in new files.
func (r *Recorder) Resume() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != paused {
		return r.stateErr("resume")
	}
	r.state = recording
	r.segment++
	now := r.now()
	r.logLocked(r.sinceStart(now), "recording", map[string]any{"action": "resume", "segment": r.segment})
	r.enqueue(item{kind: itemCmd, cmd: cmdResume, at: r.ms(now)})
	r.accepting.Store(true)
	return nil
}

// Stop ends the recording: it finishes every file and the event log and
// returns the files, in the order they started. It waits for the storage,
// so the room service should call it outside its own goroutine. The error
// is the storage error that stopped the recording or happened while
// finishing it, if any; the files are listed anyway. Later calls return
// the same.
func (r *Recorder) Stop() ([]FileInfo, error) {
	r.mu.Lock()
	if !r.stopping {
		r.stopping = true
		r.accepting.Store(false)
		now := r.now()
		if r.state == recording || r.state == paused {
			r.logLocked(r.sinceStart(now), "recording", map[string]any{"action": "stop", "segment": r.segment})
		}
		r.enqueue(item{kind: itemCmd, cmd: cmdStop, at: r.ms(now)})
		r.qmu.Lock()
		r.closed = true
		r.qmu.Unlock()
	}
	r.mu.Unlock()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.result), r.stopErr
}

// stateErr is the error of a call in the wrong state; r.mu is held.
func (r *Recorder) stateErr(op string) error {
	switch {
	case r.stopping:
		return ErrStopped
	case r.state == failed:
		return fmt.Errorf("record: the recording stopped: %w", r.err)
	case r.state == idle:
		return fmt.Errorf("record: cannot %s: not started", op)
	case r.state == recording:
		return fmt.Errorf("record: cannot %s: recording", op)
	default:
		return fmt.Errorf("record: cannot %s: paused", op)
	}
}

// sinceStart returns t on the recording clock; r.mu is held.
func (r *Recorder) sinceStart(t time.Time) int64 { return t.Sub(r.t0).Milliseconds() }

// Event logs an event of the sitting at the current time: data's fields
// (an object's, but "t" and "type"; anything else goes under "data"),
// sorted, follow "t" and "type" in the line. Events are logged from Start to Stop, pauses included (the
// room service chooses what to log while paused); otherwise Event does
// nothing. Suggested kinds: join, leave, chat, board, slide, speaking.
func (r *Recorder) Event(kind string, data any) {
	fields, err := eventFields(data)
	if err != nil {
		r.log.Warn("event not logged", "type", kind, "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping || (r.state != recording && r.state != paused) {
		return
	}
	r.appendLocked(eventLine(r.sinceStart(r.now()), kind, fields))
}

// logLocked logs one of the recorder's own events; r.mu is held.
func (r *Recorder) logLocked(t int64, kind string, data any) {
	fields, err := eventFields(data)
	if err != nil {
		panic(err) // the recorder's own data always marshals
	}
	r.appendLocked(eventLine(t, kind, fields))
}

func (r *Recorder) appendLocked(line []byte) {
	if len(r.pending)+len(line) > maxPendingEvents {
		r.dropped++
		return
	}
	r.pending = append(r.pending, line...)
}

// Stats returns the recorder's counters.
func (r *Recorder) Stats() Stats {
	return Stats{
		Packets: r.packets.Load(),
		Dropped: r.droppedN.Load(),
		Lost:    r.lost.Load(),
		Late:    r.late.Load(),
		Frames:  r.written.Load(),
	}
}

// Tap methods.

// TrackStarted implements sfu.Tap.
func (r *Recorder) TrackStarted(s sfu.StreamInfo, trackID string, codec webrtc.RTPCodecParameters) {
	r.enqueue(item{kind: itemStart, stream: s.ID, track: trackID, at: r.ms(r.now()), start: &trackStart{s, codec}})
}

// RTP implements sfu.Tap.
func (r *Recorder) RTP(streamID, trackID string, p *rtp.Packet) {
	if !r.accepting.Load() {
		return
	}
	r.enqueue(item{kind: itemRTP, stream: streamID, track: trackID, at: r.ms(r.now()), pkt: p})
}

// SenderReport implements sfu.Tap.
func (r *Recorder) SenderReport(streamID, trackID string, sr rtcp.SenderReport) {
	r.enqueue(item{kind: itemSR, stream: streamID, track: trackID, at: r.ms(r.now()), ntp: sr.NTPTime, rtp: sr.RTPTime})
}

// TrackEnded implements sfu.Tap.
func (r *Recorder) TrackEnded(streamID, trackID string) {
	r.enqueue(item{kind: itemEnd, stream: streamID, track: trackID, at: r.ms(r.now())})
}

// The queue.

type itemKind uint8

const (
	itemRTP itemKind = iota
	itemSR
	itemStart
	itemEnd
	itemCmd
)

type cmdKind uint8

const (
	cmdStart cmdKind = iota
	cmdPause
	cmdResume
	cmdStop
)

type item struct {
	kind          itemKind
	cmd           cmdKind
	stream, track string
	at            float64 // internal ms: arrival, or the command's time
	pkt           *rtp.Packet
	ntp           uint64 // sender report
	rtp           uint32
	start         *trackStart
}

type trackStart struct {
	info  sfu.StreamInfo
	codec webrtc.RTPCodecParameters
}

// enqueue queues an item for the worker; RTP is dropped when the queue is
// full. It never blocks.
func (r *Recorder) enqueue(it item) {
	r.qmu.Lock()
	if r.closed {
		r.qmu.Unlock()
		return
	}
	if it.kind == itemRTP {
		if r.queued >= maxQueued {
			r.qmu.Unlock()
			r.droppedN.Add(1)
			return
		}
		r.queued++
	}
	r.queue = append(r.queue, it)
	r.qmu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// take returns the queued items, giving back spare as the next queue.
func (r *Recorder) take(spare []item) []item {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	items := r.queue
	r.queue = spare[:0]
	r.queued = 0
	return items
}

// The worker: everything below runs on the recorder's goroutine.

type trackKey struct{ stream, track string }

type worker struct {
	r        *Recorder
	keyEvery int64 // ms; 0: never

	streams map[string]*stream
	tracks  map[trackKey]*track
	parked  map[string]*recFile // files of ended streams, by parkKey
	conns   map[string]*float64 // sender NTP ms minus internal ms, by publishing connection (timing.go)

	recording bool
	failed    bool
	segment   int
	t0        int64   // internal ms of Start
	segStart  int64   // internal ms of the current segment's start
	segEnd    int64   // and of its end, once paused (math.MaxInt64 before)
	latest    float64 // the latest arrival of a packet
	fileN     int
	files     []FileInfo
	events    *sink
}

type track struct {
	key    trackKey
	stream *stream
	video  bool
	clock  *clock
	asm    *assembler
	last   float64 // the last arrival

	// Frames wait in held until the first sender report (or maxHold
	// after the first packet, at since).
	holding bool
	held    []frame
	began   bool
	since   float64

	waitKey bool  // video: frames wait for a keyframe
	lastKey int64 // the last keyframe written
	asked   bool
	lastAsk int64 // media time of the last keyframe request
}

type stream struct {
	info         sfu.StreamInfo
	video, audio *track
	channels     int
	queue        [2][]tframe // frames waiting to be interleaved: video, audio
	file         *recFile
}

// tframe is a frame with its time.
type tframe struct {
	frame
	t     int64 // internal ms
	video bool
}

// recFile is a stream's open file.
type recFile struct {
	info    sfu.StreamInfo // of the stream that opened it
	w       *webmFile
	spec    fileSpec
	name    string
	segment int
	skip    int64  // paused time cut out (Join)
	spans   []Span // internal ms; the last one's EndMs is -1 while open
	lastT   int64
	// width and height are the largest picture so far (by area).
	width, height int
}

// size notes a keyframe's picture size.
func (fl *recFile) size(w, h int) {
	if w*h > fl.width*fl.height {
		fl.width, fl.height = w, h
	}
}

func (w *worker) run() {
	r := w.r
	defer close(r.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var spare []item
	for {
		select {
		case <-r.wake:
		case <-tick.C:
			w.tick()
		}
		items := r.take(spare)
		for i := range items {
			if w.handle(&items[i]) {
				return
			}
			items[i] = item{} // let go of the packet
		}
		spare = items
	}
}

// handle handles an item; it returns true when the recorder has stopped.
func (w *worker) handle(it *item) (stop bool) {
	defer func() {
		// A bug here must not take the classes down with it.
		if v := recover(); v != nil {
			w.r.log.Error("recorder panic", "panic", v)
			w.fail(fmt.Errorf("record: internal error: %v", v))
			stop = it.kind == itemCmd && it.cmd == cmdStop
			if stop {
				w.finish()
			}
		}
	}()
	switch it.kind {
	case itemRTP:
		w.packet(it)
	case itemSR:
		w.report(it)
	case itemStart:
		w.trackStart(it)
	case itemEnd:
		w.trackEnd(trackKey{it.stream, it.track})
	case itemCmd:
		switch it.cmd {
		case cmdStart:
			w.start(int64(it.at))
		case cmdPause:
			w.pause(int64(it.at))
		case cmdResume:
			w.resume(int64(it.at))
		case cmdStop:
			w.stop()
			return true
		}
	}
	return false
}

func (w *worker) trackStart(it *item) {
	key := trackKey{it.stream, it.track}
	if w.tracks[key] != nil || w.failed {
		return
	}
	codec := it.start.codec
	var video bool
	switch {
	case strings.EqualFold(codec.MimeType, webrtc.MimeTypeVP8):
		video = true
	case strings.EqualFold(codec.MimeType, webrtc.MimeTypeOpus):
	default:
		w.r.log.Warn("track not recorded: codec", "stream", it.stream, "track", it.track, "codec", codec.MimeType)
		return
	}
	s := w.streams[it.stream]
	if s == nil {
		s = &stream{info: it.start.info}
		w.streams[it.stream] = s
	}
	if video && s.video != nil || !video && s.audio != nil {
		w.r.log.Warn("track not recorded: a second one of its kind", "stream", it.stream, "track", it.track)
		return
	}
	tr := &track{key: key, stream: s, video: video, clock: newClock(codec.ClockRate), asm: newAssembler(video), last: it.at, holding: true}
	tr.asm.lostN, tr.asm.lateN = &w.r.lost, &w.r.late
	w.tracks[key] = tr
	if video {
		s.video = tr
		tr.waitKey = true
		if w.recording {
			w.askKeyframe(tr, 0, true)
		}
	} else {
		s.audio = tr
		s.channels = int(codec.Channels)
		if s.channels < 1 || s.channels > 2 {
			s.channels = 2
		}
		if s.video != nil && s.file != nil && w.recording {
			// The screen's sound started: the next keyframe begins a
			// file with it.
			w.askKeyframe(s.video, 0, true)
		}
	}
}

func (w *worker) trackEnd(key trackKey) {
	tr := w.tracks[key]
	if tr == nil {
		return
	}
	delete(w.tracks, key)
	s := tr.stream
	tr.asm.flush(func(f frame) { w.frame(tr, f) })
	w.unhold(tr)
	w.release(s, true)
	if tr.video {
		s.video = nil
	} else {
		s.audio = nil
	}
	if s.video == nil && s.audio == nil {
		w.park(s)
		delete(w.streams, s.info.ID)
	}
}

// parkKey names the publisher and label whose next stream may go on in a
// parked file.
func parkKey(info sfu.StreamInfo) string { return info.UserID + "\x00" + info.Label }

// park keeps the file of a stream that ended open for the publisher's next
// stream of the same label (a camera turned off and on), in the same
// segment (or, with Join, the same recording); see openFile.
func (w *worker) park(s *stream) {
	fl := s.file
	if fl == nil {
		return
	}
	s.file = nil
	key := parkKey(fl.info)
	if old := w.parked[key]; old != nil {
		delete(w.parked, key)
		w.finishFile(old)
	}
	if last := &fl.spans[len(fl.spans)-1]; last.EndMs < 0 {
		// The last frame shows for about a frame's time.
		last.EndMs = max(fl.lastT+parkTail, last.StartMs)
	}
	if err := fl.w.flush(); err != nil {
		w.fail(fmt.Errorf("record: %s: %w", fl.name, err))
		w.finishFile(fl)
		return
	}
	w.parked[key] = fl
}

// closeParked finishes every parked file.
func (w *worker) closeParked() {
	keys := make([]string, 0, len(w.parked))
	for k := range w.parked {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fl := w.parked[k]
		delete(w.parked, k)
		w.finishFile(fl)
	}
}

// unpark gives s the parked file of its publisher and label, if it takes
// the same tracks, to go on at frame f: the time since the file's last
// span ended is cut out of it, as a pause is.
func (w *worker) unpark(s *stream, spec fileSpec, f tframe) bool {
	key := parkKey(s.info)
	fl := w.parked[key]
	if fl == nil {
		return false
	}
	delete(w.parked, key)
	if fl.spec.video != spec.video || fl.spec.audio != spec.audio || spec.audio && fl.spec.channels != spec.channels {
		w.finishFile(fl)
		return false
	}
	end := fl.spans[len(fl.spans)-1].EndMs
	fl.skip += f.t - end
	fl.spans = append(fl.spans, Span{f.t, -1})
	s.file = fl
	w.log("file", map[string]any{"action": "continue", "name": fl.name, "stream": s.info.ID, "segment": w.segment, "start": f.t - w.t0})
	return true
}

func (w *worker) packet(it *item) {
	tr := w.tracks[trackKey{it.stream, it.track}]
	if tr == nil || !w.recording || w.failed {
		return
	}
	w.r.packets.Add(1)
	tr.last = it.at
	w.latest = max(w.latest, it.at)
	if !tr.began {
		tr.began, tr.since = true, it.at
	}
	tr.clock.packet(it.pkt.Timestamp, it.at)
	tr.asm.push(it.pkt, it.at, func(f frame) { w.frame(tr, f) })
}

func (w *worker) report(it *item) {
	tr := w.tracks[trackKey{it.stream, it.track}]
	if tr == nil {
		return
	}
	ntp := ntpMs(it.ntp)
	off := w.conns[tr.stream.info.Conn]
	if off == nil {
		off = new(float64)
		*off = ntp - it.at
		w.conns[tr.stream.info.Conn] = off
	}
	// The report that took least time to come is the best.
	*off = max(*off, ntp-it.at)
	tr.clock.report(it.rtp, ntp, off)
	w.unhold(tr)
}

// frame takes a frame from a track's assembler.
func (w *worker) frame(tr *track, f frame) {
	if tr.holding {
		tr.held = append(tr.held, f)
		if tr.last-tr.since > maxHold {
			w.unhold(tr)
		}
		return
	}
	w.timed(tr, f)
	w.release(tr.stream, false)
}

// holds reports whether a track holds frames back, or will.
func (tr *track) holds() bool { return tr.holding && tr.began }

// unhold times and passes on the frames a track held.
func (w *worker) unhold(tr *track) {
	if !tr.holding {
		return
	}
	tr.holding = false
	for i, f := range tr.held {
		tr.held[i] = frame{}
		w.timed(tr, f)
	}
	tr.held = nil
	w.release(tr.stream, false) // once all are in: the other track waited for them
}

// timed times a frame and queues it to be interleaved with the other
// track's (or writes it, if it has none).
func (w *worker) timed(tr *track, f frame) {
	if f.lost && tr.video && !f.key {
		tr.waitKey = true
	}
	s := tr.stream
	tf := tframe{frame: f, t: tr.clock.at(f.ts), video: tr.video}
	if s.video == nil || s.audio == nil {
		w.route(s, tf)
		return
	}
	i := 0
	if !tr.video {
		i = 1
	}
	s.queue[i] = append(s.queue[i], tf)
}

// release routes a stream's queued frames in time order, as far as both
// tracks have come (or all of them). A track may run mergeDelay ahead of
// the other, unless that one holds frames: they are timed later and may
// come before.
func (w *worker) release(s *stream, all bool) {
	for {
		v, a := s.queue[0], s.queue[1]
		var i int
		switch {
		case len(v) > 0 && len(a) > 0:
			if a[0].t < v[0].t {
				i = 1
			}
		case len(v) > 0 && (all || s.audio == nil || !s.audio.holds() && v[len(v)-1].t-v[0].t > mergeDelay):
		case len(a) > 0 && (all || s.video == nil || !s.video.holds() && a[len(a)-1].t-a[0].t > mergeDelay):
			i = 1
		default:
			return
		}
		f := s.queue[i][0]
		s.queue[i][0] = tframe{}
		s.queue[i] = s.queue[i][1:]
		w.route(s, f)
	}
}

// route writes a frame to its stream's file, opening and closing files as
// needed.
func (w *worker) route(s *stream, f tframe) {
	if w.failed || !w.recording || f.t < w.segStart || f.t >= w.segEnd {
		return
	}
	if f.video {
		tr := s.video
		if tr == nil {
			return
		}
		if !vp8Whole(f.data) {
			// Cut short: dropped as lost, and the picture waits for the
			// next keyframe.
			w.r.lost.Add(1)
			tr.waitKey = true
			w.askKeyframe(tr, f.t, false)
			return
		}
		switch {
		case f.key:
			// A new picture size goes on in the same file: VP8 keyframes
			// carry their size, and players (browsers, ffmpeg) follow it.
			if fl := s.file; fl == nil || fl.spec.audio != (s.audio != nil) {
				w.closeFile(s)
				if !w.openFile(s, f) {
					return
				}
			}
			s.file.size(f.width, f.height)
			tr.waitKey = false
			tr.lastKey = f.t
		case s.file == nil || tr.waitKey:
			w.askKeyframe(tr, f.t, false)
			return
		case w.keyEvery > 0 && f.t-tr.lastKey >= w.keyEvery:
			w.askKeyframe(tr, f.t, false)
		}
	} else {
		if s.file == nil {
			if s.video != nil || hasVideo(s.info.Label) {
				return // a screen's sound waits for its picture
			}
			if !w.openFile(s, f) {
				return
			}
		}
		if !s.file.spec.audio {
			return // until the next keyframe opens a file with sound
		}
	}
	fl := s.file
	fl.lastT = f.t
	if err := fl.w.write(f.video, f.key, f.t-fl.skip, f.data); err != nil {
		w.fail(err)
		return
	}
	w.r.written.Add(1)
}

// hasVideo reports whether a stream with label has a video track (all
// but "mic": the SFU checks every offer against its label), so that its
// sound waits for the picture even if the sound's first packet comes
// first.
func hasVideo(label string) bool { return label != "mic" }

// askKeyframe asks a track's publisher for a keyframe, at most once per
// keyframeRetry of media unless now.
func (w *worker) askKeyframe(tr *track, t int64, now bool) {
	if !now && tr.asked && t-tr.lastAsk < keyframeRetry {
		return
	}
	tr.asked, tr.lastAsk = true, t
	if w.r.opts.RequestKeyframe != nil {
		w.r.opts.RequestKeyframe(tr.stream.info.ID)
	}
}

// safeName keeps the letters, digits, '-' and '_' of s, at most 32.
func safeName(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteRune(c)
			if b.Len() == 32 {
				break
			}
		}
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

// openFile starts a file for s at frame f (a keyframe, or audio).
func (w *worker) openFile(s *stream, f tframe) bool {
	spec := fileSpec{
		audio:    s.audio != nil,
		channels: s.channels,
		date:     w.r.base.Add(time.Duration(f.t) * time.Millisecond),
	}
	if f.video {
		spec.video, spec.width, spec.height = true, f.width, f.height
	}
	if w.unpark(s, spec, f) {
		return true
	}
	w.fileN++
	name := fmt.Sprintf("%s-%s-%s-%d-%d.webm", safeName(s.info.UserID), safeName(s.info.Label), safeName(s.info.ID), w.segment, w.fileN)
	file, err := w.r.st.Create(name)
	if err != nil {
		w.fail(fmt.Errorf("record: %s: %w", name, err))
		return false
	}
	wf, err := openWebM(file, spec)
	if err != nil {
		w.fail(fmt.Errorf("record: %s: %w", name, err))
		return false
	}
	s.file = &recFile{info: s.info, w: wf, spec: spec, name: name, segment: w.segment, spans: []Span{{f.t, -1}}}
	w.log("file", map[string]any{
		"action": "open", "name": name, "stream": s.info.ID, "user": s.info.UserID, "label": s.info.Label,
		"kinds": kinds(spec), "segment": w.segment, "width": spec.width, "height": spec.height, "start": f.t - w.t0,
	})
	return true
}

func kinds(spec fileSpec) []string {
	var k []string
	if spec.video {
		k = append(k, "video")
	}
	if spec.audio {
		k = append(k, "audio")
	}
	return k
}

// closeFile finishes s's file, if any.
func (w *worker) closeFile(s *stream) {
	fl := s.file
	if fl == nil {
		return
	}
	s.file = nil
	w.finishFile(fl)
}

// finishFile closes a file and lists it.
func (w *worker) finishFile(fl *recFile) {
	if last := &fl.spans[len(fl.spans)-1]; last.EndMs < 0 {
		last.EndMs = fl.lastT
	}
	err := fl.w.close()
	info := FileInfo{
		Name:       fl.name,
		StreamID:   fl.info.ID,
		UserID:     fl.info.UserID,
		Label:      fl.info.Label,
		Kinds:      kinds(fl.spec),
		StartMs:    fl.spans[0].StartMs - w.t0,
		DurationMs: fl.w.duration(),
		Width:      fl.width,
		Height:     fl.height,
		Size:       fl.w.sink.Written(),
		Segment:    fl.segment,
	}
	for _, sp := range fl.spans {
		info.Spans = append(info.Spans, Span{sp.StartMs - w.t0, sp.EndMs - w.t0})
	}
	w.files = append(w.files, info)
	spans := make([][2]int64, len(info.Spans))
	for i, sp := range info.Spans {
		spans[i] = [2]int64{sp.StartMs, sp.EndMs}
	}
	w.log("file", map[string]any{"action": "close", "name": fl.name, "end": fl.lastT - w.t0, "duration": info.DurationMs, "size": info.Size,
		"width": info.Width, "height": info.Height, "spans": spans})
	if err != nil {
		w.fail(fmt.Errorf("record: %s: %w", fl.name, err))
	}
}

// log logs one of the recorder's events, now.
func (w *worker) log(kind string, data any) {
	r := w.r
	r.mu.Lock()
	r.logLocked(r.sinceStart(r.now()), kind, data)
	r.mu.Unlock()
}

func (w *worker) start(at int64) {
	w.t0, w.segStart, w.segEnd, w.recording = at, at, math.MaxInt64, true
	f, err := w.r.st.Create(EventsFile)
	if err != nil {
		w.fail(fmt.Errorf("record: %s: %w", EventsFile, err))
		return
	}
	w.events = newSink(f)
	for _, tr := range w.sortedTracks() {
		if tr.video {
			w.askKeyframe(tr, 0, true)
		}
	}
}

// flushAll writes every frame waiting in assemblers and interleaving
// queues.
func (w *worker) flushAll() {
	for _, tr := range w.sortedTracks() {
		tr.asm.flush(func(f frame) { w.frame(tr, f) })
		w.unhold(tr)
	}
	for _, s := range w.sortedStreams() {
		w.release(s, true)
	}
}

func (w *worker) pause(at int64) {
	if w.failed {
		return
	}
	w.segEnd = at // what was captured before the pause is written
	w.flushAll()
	w.recording = false
	if !w.r.opts.Join {
		w.closeParked() // a segment's files end with it
	}
	for _, s := range w.sortedStreams() {
		if s.file == nil {
			continue
		}
		if !w.r.opts.Join {
			w.closeFile(s)
			continue
		}
		s.file.spans[len(s.file.spans)-1].EndMs = at
		if err := s.file.w.flush(); err != nil {
			w.fail(err)
			return
		}
	}
}

func (w *worker) resume(at int64) {
	if w.failed {
		return
	}
	w.segment++
	paused := at - w.segEnd
	w.recording, w.segStart, w.segEnd = true, at, math.MaxInt64
	for _, tr := range w.sortedTracks() {
		if float64(at)-tr.last > float64(longPause.Milliseconds()) {
			tr.clock.reset()
		}
		if tr.video {
			tr.waitKey = true
			w.askKeyframe(tr, 0, true)
		}
	}
	for _, s := range w.sortedStreams() {
		if s.file != nil {
			s.file.skip += paused
			s.file.spans = append(s.file.spans, Span{at, -1})
		}
	}
}

// tick flushes the event log and the files (every second), and ends the
// holds that have lasted (the track may have gone quiet).
func (w *worker) tick() {
	if w.failed || w.events == nil {
		return
	}
	for _, tr := range w.sortedTracks() {
		if tr.holds() && w.latest-tr.since > maxHold {
			w.unhold(tr)
		}
	}
	if err := w.flushEvents(); err != nil {
		w.fail(err)
		return
	}
	for _, s := range w.sortedStreams() {
		if s.file != nil {
			if err := s.file.w.flush(); err != nil {
				w.fail(fmt.Errorf("record: %s: %w", s.file.name, err))
				return
			}
		}
	}
}

func (w *worker) flushEvents() error {
	r := w.r
	r.mu.Lock()
	lines := r.pending
	r.pending = nil
	dropped := r.dropped
	r.dropped = 0
	r.mu.Unlock()
	if dropped > 0 {
		r.log.Warn("events dropped: the storage is too slow", "count", dropped)
	}
	if len(lines) > 0 {
		w.events.Write(lines)
	}
	if err := w.events.Flush(); err != nil {
		return fmt.Errorf("record: %s: %w", EventsFile, err)
	}
	return nil
}

func (w *worker) stop() {
	if !w.failed && w.recording {
		w.flushAll()
	}
	w.finish()
}

// finish closes every file and the event log and hands the result to Stop.
func (w *worker) finish() {
	for _, s := range w.sortedStreams() {
		w.closeFile(s)
	}
	w.closeParked()
	w.recording = false
	var err error
	if w.events != nil {
		// Even after a failure: the events help play what was written.
		err = w.flushEvents()
		w.events.Close()
		if err == nil {
			if err = w.events.Err(); err != nil {
				err = fmt.Errorf("record: %s: %w", EventsFile, err)
			}
		}
		w.events = nil
	}
	r := w.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == failed {
		err = r.err
	}
	r.state = stopped
	slices.SortStableFunc(w.files, func(a, b FileInfo) int { return cmp.Compare(a.StartMs, b.StartMs) })
	r.result, r.stopErr = w.files, err
}

// fail stops recording after a storage error.
func (w *worker) fail(err error) {
	if w.failed {
		return
	}
	w.failed = true
	r := w.r
	r.mu.Lock()
	stopping := r.stopping
	if r.state != stopped {
		r.state, r.err = failed, err
	}
	r.accepting.Store(false)
	r.mu.Unlock()
	r.log.Error("recording stopped", "err", err)
	for _, s := range w.sortedStreams() {
		w.closeFile(s) // best effort: what was written still plays
	}
	w.closeParked()
	w.recording = false
	if r.opts.OnError != nil && !stopping {
		go r.opts.OnError(err)
	}
}

func (w *worker) sortedStreams() []*stream {
	list := make([]*stream, 0, len(w.streams))
	for _, s := range w.streams {
		list = append(list, s)
	}
	slices.SortFunc(list, func(a, b *stream) int { return strings.Compare(a.info.ID, b.info.ID) })
	return list
}

func (w *worker) sortedTracks() []*track {
	list := make([]*track, 0, len(w.tracks))
	for _, tr := range w.tracks {
		list = append(list, tr)
	}
	slices.SortFunc(list, func(a, b *track) int {
		return cmp.Or(strings.Compare(a.key.stream, b.key.stream), strings.Compare(a.key.track, b.key.track))
	})
	return list
}
