package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/at-wat/ebml-go"

	"github.com/lectern-lms/lectern/internal/classroom/sfu"
)

// sim drives a Recorder through its Tap methods with synthetic senders on
// a fake clock, faster than real time.
type sim struct {
	t    *testing.T
	clk  *fakeClock
	st   *memStorage
	r    *Recorder
	acts []act

	mu   sync.Mutex
	asks map[string]int // keyframe requests, by stream
	errs []error
}

type act struct {
	at float64
	n  int
	fn func()
}

func newSim(t *testing.T, opts Options) *sim {
	s := &sim{t: t, clk: newFakeClock(), st: newMemStorage(), asks: map[string]int{}}
	opts.Now = s.clk.now
	opts.Logger = testLogger()
	opts.RequestKeyframe = func(id string) {
		s.mu.Lock()
		s.asks[id]++
		s.mu.Unlock()
	}
	opts.OnError = func(err error) {
		s.mu.Lock()
		s.errs = append(s.errs, err)
		s.mu.Unlock()
	}
	s.r = New(s.st, opts)
	t.Cleanup(func() { s.r.Stop() })
	return s
}

// at schedules fn at ms.
func (s *sim) at(ms float64, fn func()) {
	s.acts = append(s.acts, act{ms, len(s.acts), fn})
}

// run plays the schedule.
func (s *sim) run() {
	slices.SortFunc(s.acts, func(a, b act) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		return a.n - b.n
	})
	for i, a := range s.acts {
		s.clk.set(a.at)
		a.fn()
		if i%256 == 0 {
			drain(s.r)
		}
	}
	s.acts = nil
}

func (s *sim) must(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

// track makes a synthetic track of a stream and tells the recorder at ms.
func (s *sim) track(at float64, info sfu.StreamInfo, id string, video bool, ssrc uint32) *simTrack {
	tr := &simTrack{info: info, id: id, video: video, seq: uint16(ssrc), ts0: ssrc * 7919, ssrc: ssrc, perMs: 48, width: 640, height: 480}
	if video {
		tr.perMs = 90
	}
	s.at(at, func() { s.r.TrackStarted(info, id, tr.codec()) })
	return tr
}

// frames schedules a frame every period ms of capture time from from to
// to, arriving delay ms (plus jitter(k)) after its capture; key(k, c)
// tells keyframes.
func (s *sim) frames(tr *simTrack, from, to, period, delay float64, jitter func(int) float64, key func(int, float64) bool) {
	for k := 0; ; k++ {
		c := from + float64(k)*period
		if c >= to {
			return
		}
		arrive := c + delay
		if jitter != nil {
			arrive += jitter(k)
		}
		s.at(arrive, func() {
			size := 300
			isKey := tr.video && key != nil && key(k, c)
			if isKey {
				size = 2500
			}
			for _, p := range tr.packets(c, isKey, size) {
				s.r.RTP(tr.info.ID, tr.id, p)
			}
		})
	}
}

// reports schedules sender reports every period from from to to, arriving
// delay after they are sent (spike more for the first); the sender's
// clock reads our ms plus offset.
func (s *sim) reports(tr *simTrack, from, to, period, delay, offset float64) {
	s.reportsSpike(tr, from, to, period, delay, 0, offset)
}

func (s *sim) reportsSpike(tr *simTrack, from, to, period, delay, spike, offset float64) {
	for at := from; at < to; at += period {
		d := delay
		if at == from {
			d += spike
		}
		s.at(at+d, func() {
			s.r.SenderReport(tr.info.ID, tr.id, tr.report(at, func(ms float64) float64 { return ms + offset }))
		})
	}
}

// waitError waits for OnError.
func (s *sim) waitError() {
	s.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.errs)
		s.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatal("no error reported")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *sim) stop() []FileInfo {
	s.t.Helper()
	files, err := s.r.Stop()
	if err != nil {
		s.t.Fatalf("Stop: %v", err)
	}
	if st := s.r.Stats(); st.Dropped != 0 {
		s.t.Errorf("%d packets dropped", st.Dropped)
	}
	return files
}

func (s *sim) read(f FileInfo) parsed {
	s.t.Helper()
	return readWebM(s.t, f.Name, s.st.data(f.Name), false)
}

// ntpBase is a sender's NTP clock against ours (ms): 2026 plus a bit.
const ntpBase = 3_981_000_000_000 + 12_345.678

var (
	ann       = sfu.StreamInfo{ID: "s1", Conn: "c1", UserID: "ann", Label: "camera", ClientID: "cam"}
	annMic    = sfu.StreamInfo{ID: "s2", Conn: "c1", UserID: "ann", Label: "mic", ClientID: "mic"}
	annScreen = sfu.StreamInfo{ID: "s3", Conn: "c1", UserID: "ann", Label: "screen", ClientID: "scr"}
)

// TestSync records half an hour of a camera and a microphone whose audio
// clock runs 200 ppm slow (sound cards drift) and whose packets arrive with
// different delays and jitter, and checks that every block of both files
// plays at its capture time give or take a few ms: with sender reports,
// the drift is followed (and a first report held up 400 ms on its way
// does no lasting harm). Without them, it is not (the control: timing by
// arrival can follow a clock that runs fast, not one that runs slow).
func TestSync(t *testing.T) {
	const long = 1800_000.0
	for _, withSR := range []bool{true, false} {
		t.Run(fmt.Sprintf("reports=%v", withSR), func(t *testing.T) {
			s := newSim(t, Options{})
			s.at(0, func() { s.must(s.r.Start()) })
			cam := s.track(0, ann, "video0", true, 1111)
			mic := s.track(0, annMic, "audio0", false, 2222)
			mic.perMs = 48 * (1 - 200e-6)
			// A frame every 400 ms is enough for the clocks (and fast).
			s.frames(cam, 200, long, 400, 70, func(k int) float64 { return float64(k * 37 % 15) }, func(k int, _ float64) bool { return k%25 == 0 })
			s.frames(mic, 0, long, 400, 25, func(k int) float64 { return float64(k * 13 % 10) }, nil)
			if withSR {
				s.reports(cam, 2500, long, 5000, 20, ntpBase)
				s.reportsSpike(mic, 1000, long, 5000, 20, 400, ntpBase)
			}
			s.at(long+500, func() {})
			s.run()
			files := s.stop()
			if len(files) != 2 {
				t.Fatalf("files %+v, want 2", files)
			}
			lo, hi := math.Inf(1), math.Inf(-1)     // offset range, after the first reports
			all0, all1 := math.Inf(1), math.Inf(-1) // over everything
			for _, f := range files {
				p := s.read(f)
				if len(p.blocks) < 4490 {
					t.Errorf("%s: %d blocks, want 4500", f.Name, len(p.blocks))
				}
				if last := p.blocks[len(p.blocks)-1].t; math.Abs(p.duration-float64(last)) > 1 || f.DurationMs != last {
					t.Errorf("%s: Duration %f, DurationMs %d, last block at %d", f.Name, p.duration, f.DurationMs, last)
				}
				if p.cues < 150 {
					t.Errorf("%s: %d cue points", f.Name, p.cues)
				}
				for _, b := range p.blocks {
					c := captured(b.data)
					d := float64(f.StartMs+b.t) - c
					all0, all1 = min(all0, d), max(all1, d)
					if c >= 3000 {
						lo, hi = min(lo, d), max(hi, d)
					}
				}
			}
			t.Logf("play time minus capture time: %.1f to %.1f ms (after the first reports), %.1f to %.1f (all)", lo, hi, all0, all1)
			if withSR {
				if hi-lo > 5 || lo < 19 || hi > 25 {
					t.Errorf("audio and video are out of sync: offsets %.1f to %.1f ms (all: %.1f to %.1f)", lo, hi, all0, all1)
				}
			} else if hi-lo < 300 {
				t.Errorf("without sender reports the drift should show (360 ms in 30 minutes); offsets %.1f to %.1f", lo, hi)
			}
		})
	}
}

// segmentSim records a camera (30 fps, a keyframe a second) and a
// microphone for 10 s, paused from 4 s to 6 s.
func segmentSim(t *testing.T, join bool) (*sim, []FileInfo) {
	s := newSim(t, Options{Join: join})
	s.at(0, func() { s.must(s.r.Start()) })
	cam := s.track(0, ann, "video0", true, 1111)
	mic := s.track(0, annMic, "audio0", false, 2222)
	s.frames(cam, 0, 10000, 1000.0/30, 30, nil, func(k int, _ float64) bool { return k%30 == 0 })
	s.frames(mic, 0, 10000, 20, 10, nil, nil)
	s.reports(cam, 0, 10000, 1000, 5, ntpBase)
	s.reports(mic, 0, 10000, 1000, 5, ntpBase)
	s.at(2000, func() { s.r.Event("chat", map[string]string{"user": "ann", "text": "hello"}) })
	s.at(4000, func() { s.must(s.r.Pause()) })
	s.at(5000, func() { s.r.Event("chat", map[string]string{"user": "ann", "text": "off the record"}) })
	s.at(6000, func() { s.must(s.r.Resume()) })
	s.at(10050, func() {})
	s.run()
	return s, s.stop()
}

func TestSegments(t *testing.T) {
	s, files := segmentSim(t, false)
	if len(files) != 4 {
		t.Fatalf("%d files, want 4: %+v", len(files), files)
	}
	for _, f := range files {
		p := s.read(f)
		seg := f.Segment
		start, end := int64(0), int64(4000)
		if seg == 1 {
			start, end = 6000, 10000
		}
		// Capture time + 5 ms (the reports' delay) is play time.
		if f.StartMs < start || f.StartMs > start+100 || f.StartMs+f.DurationMs > end+10 || f.DurationMs < 3800 {
			t.Errorf("%s: segment %d from %d for %d ms, want about %d to %d", f.Name, seg, f.StartMs, f.DurationMs, start, end)
		}
		if len(f.Spans) != 1 || f.Spans[0] != (Span{f.StartMs, f.StartMs + f.DurationMs}) {
			t.Errorf("%s: spans %v", f.Name, f.Spans)
		}
		want := []string{"V_VP8"}
		if f.Label == "mic" {
			want = []string{"A_OPUS"}
		}
		if !slices.Equal(p.codecs(), want) || !slices.Equal(f.Kinds, []string{map[string]string{"V_VP8": "video", "A_OPUS": "audio"}[want[0]]}) {
			t.Errorf("%s: codecs %v, kinds %v", f.Name, p.codecs(), f.Kinds)
		}
		if f.Label == "camera" && (f.Width != 640 || f.Height != 480) {
			t.Errorf("%s: %dx%d", f.Name, f.Width, f.Height)
		}
		if f.Size != int64(len(s.st.data(f.Name))) {
			t.Errorf("%s: size %d, file %d bytes", f.Name, f.Size, len(s.st.data(f.Name)))
		}
		for _, b := range p.blocks {
			if d := float64(f.StartMs+b.t) - captured(b.data); math.Abs(d-5) > 2 {
				t.Errorf("%s: block captured at %.1f plays at %d", f.Name, captured(b.data), f.StartMs+b.t)
				break
			}
		}
	}
	names := []string{EventsFile}
	for _, f := range files {
		names = append(names, f.Name)
		if want := fmt.Sprintf("ann-%s-%s-%d-", f.Label, f.StreamID, f.Segment); !strings.HasPrefix(f.Name, want) {
			t.Errorf("file name %s, want %s<n>.webm", f.Name, want)
		}
	}
	if got := s.st.names(); !slices.Equal(got, slices.Sorted(slices.Values(names))) {
		t.Errorf("files in storage %q, want %q", got, names)
	}

	// The event log.
	var types []string
	logged := map[string][]string{}
	prev := int64(-1)
	sc := bufio.NewScanner(bytes.NewReader(s.st.data(EventsFile)))
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("event %q: %v", sc.Text(), err)
		}
		tm := int64(e["t"].(float64))
		if tm < prev {
			t.Errorf("event at %d after one at %d", tm, prev)
		}
		prev = tm
		switch e["type"] {
		case "recording":
			types = append(types, fmt.Sprintf("%d recording %s", tm, e["action"]))
		case "chat":
			types = append(types, fmt.Sprintf("%d chat %s", tm, e["text"]))
		case "file":
			// Logged when done (the test runs ahead of the recorder),
			// with the file's own times.
			i := slices.IndexFunc(files, func(f FileInfo) bool { return f.Name == e["name"] })
			if i < 0 {
				t.Errorf("event for an unknown file: %s", sc.Text())
				continue
			}
			f := files[i]
			start, end := f.StartMs, f.StartMs+f.DurationMs
			if e["action"] == "open" && e["start"] != float64(start) || e["action"] == "close" && (e["end"] != float64(end) || e["size"] != float64(f.Size)) {
				t.Errorf("event %s for %+v", sc.Text(), f)
			}
			logged[f.Name] = append(logged[f.Name], e["action"].(string))
		}
	}
	want := []string{
		"0 recording start", "2000 chat hello", "4000 recording pause",
		"5000 chat off the record", "6000 recording resume", "10050 recording stop",
	}
	if !slices.Equal(types, want) {
		t.Errorf("events\n%q, want\n%q", types, want)
	}
	for _, f := range files {
		if got := logged[f.Name]; !slices.Equal(got, []string{"open", "close"}) {
			t.Errorf("file %s: logged %q", f.Name, got)
		}
	}
	// Keyframes were asked for at the start and at the resume.
	s.mu.Lock()
	if s.asks["s1"] < 2 || s.asks["s2"] != 0 {
		t.Errorf("keyframe requests %v", s.asks)
	}
	s.mu.Unlock()
}

func TestSegmentsJoined(t *testing.T) {
	s, files := segmentSim(t, true)
	if len(files) != 2 {
		t.Fatalf("%d files, want 2: %+v", len(files), files)
	}
	for _, f := range files {
		p := s.read(f)
		if len(f.Spans) != 2 || f.Spans[0].StartMs != f.StartMs || f.Spans[0].EndMs != 4000 || f.Spans[1].StartMs != 6000 || f.Spans[1].EndMs < 9900 {
			t.Errorf("%s: spans %v", f.Name, f.Spans)
		}
		// Continuous: the paused 2 s are cut out.
		if f.DurationMs < 7800 || f.DurationMs > 8000 {
			t.Errorf("%s: %d ms, want about 8000", f.Name, f.DurationMs)
		}
		// Each block plays where the spans say.
		for i, b := range p.blocks {
			if i > 0 && b.t-p.blocks[i-1].t > 100 {
				t.Errorf("%s: a gap of %d ms at %d", f.Name, b.t-p.blocks[i-1].t, b.t)
			}
			rec := f.StartMs + b.t
			if rec > f.Spans[0].EndMs {
				rec += f.Spans[1].StartMs - f.Spans[0].EndMs
			}
			if d := float64(rec) - captured(b.data); math.Abs(d-5) > 2 {
				t.Errorf("%s: block captured at %.1f plays at %d", f.Name, captured(b.data), rec)
				break
			}
		}
	}
}

// TestResolutionChange: a camera whose picture grows (as browsers' do in
// a call's first seconds) stays one file: the track's header has the first
// size, FileInfo the largest, and the new size starts at its keyframe with
// no gap in the blocks.
func TestResolutionChange(t *testing.T) {
	s := newSim(t, Options{})
	s.at(0, func() { s.must(s.r.Start()) })
	cam := s.track(0, ann, "video0", true, 1111)
	s.frames(cam, 0, 6000, 1000.0/30, 30, nil, func(k int, c float64) bool {
		switch {
		case c >= 4000:
			cam.width, cam.height = 960, 540 // and back down: the largest stays
		case c >= 3000:
			cam.width, cam.height = 1280, 720
		}
		return k%30 == 0
	})
	s.reports(cam, 0, 6000, 1000, 5, ntpBase)
	s.at(6050, func() {})
	s.run()
	files := s.stop()
	if len(files) != 1 {
		t.Fatalf("%d files, want 1: %+v", len(files), files)
	}
	f := files[0]
	p := s.read(f)
	v := p.doc.Segment.Tracks.TrackEntry[0].Video
	if f.Width != 1280 || f.Height != 720 || v.PixelWidth != 640 || v.PixelHeight != 480 {
		t.Errorf("%s: %dx%d (track %dx%d), want 1280x720 (track 640x480)", f.Name, f.Width, f.Height, v.PixelWidth, v.PixelHeight)
	}
	if f.StartMs > 10 || f.DurationMs < 5900 {
		t.Errorf("the file covers %d+%d ms, want 0-6000", f.StartMs, f.DurationMs)
	}
	var sizes []string
	for i, b := range p.blocks {
		if i > 0 && b.t-p.blocks[i-1].t > 50 {
			t.Errorf("a gap of %d ms at %d", b.t-p.blocks[i-1].t, b.t)
		}
		if b.key {
			_, w, h := vp8Keyframe(b.data)
			sizes = append(sizes, fmt.Sprintf("%d:%dx%d", b.t/1000, w, h))
		}
	}
	if want := "0:640x480 1:640x480 2:640x480 3:1280x720 4:960x540 5:960x540"; strings.Join(sizes, " ") != want {
		t.Errorf("keyframes (s:size) %s, want %s", strings.Join(sizes, " "), want)
	}
}

// TestScreen records a screen with sound: one file with both tracks,
// interleaved, even though the sound's first sender report comes 3 s
// after the picture's (browsers send them every 5 s for audio); sound that
// starts late starts a new file at the next keyframe.
func TestScreen(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprintf("late sound=%v", late), func(t *testing.T) {
			s := newSim(t, Options{})
			s.at(0, func() { s.must(s.r.Start()) })
			video := s.track(0, annScreen, "video0", true, 3333)
			soundAt := 0.0
			if late {
				soundAt = 2500
			}
			sound := s.track(soundAt, annScreen, "audio1", false, 4444)
			s.frames(video, 0, 5000, 1000.0/15, 60, nil, func(k int, _ float64) bool { return k%15 == 0 })
			s.frames(sound, soundAt, 5000, 20, 10, nil, nil)
			s.reports(video, 0, 5000, 1000, 5, ntpBase)
			soundReports := 3000.0
			if late {
				soundReports = soundAt
			}
			s.reports(sound, soundReports, 5000, 1000, 5, ntpBase)
			s.at(5100, func() {})
			s.run()
			files := s.stop()
			want := [][]string{{"V_VP8", "A_OPUS"}}
			if late {
				want = [][]string{{"V_VP8"}, {"V_VP8", "A_OPUS"}}
			}
			if len(files) != len(want) {
				t.Fatalf("%d files, want %d: %+v", len(files), len(want), files)
			}
			for i, f := range files {
				p := s.read(f)
				if !slices.Equal(p.codecs(), want[i]) {
					t.Errorf("%s: codecs %v, want %v", f.Name, p.codecs(), want[i])
				}
				n := map[uint64]int{}
				for _, b := range p.blocks {
					n[b.track]++
					if d := float64(f.StartMs+b.t) - captured(b.data); math.Abs(d-5) > 2 {
						t.Errorf("%s: block captured at %.1f plays at %d", f.Name, captured(b.data), f.StartMs+b.t)
						break
					}
				}
				if len(want[i]) == 2 && (n[1] < 20 || n[2] < 50) {
					t.Errorf("%s: blocks by track %v", f.Name, n)
				}
			}
			if late && (files[1].StartMs < 3000 || files[1].StartMs > 3010) {
				t.Errorf("the file with sound starts at %d, want the keyframe at 3005", files[1].StartMs)
			}
		})
	}
}

// TestDiskFull fills the storage while recording: the recording stops with
// an error to OnError, the recorder takes no more packets and never blocks,
// and Stop lists what was written.
func TestDiskFull(t *testing.T) {
	s := newSim(t, Options{})
	s.st.budget = 150_000 // the Cues reservations take 32 KiB a file
	s.at(0, func() { s.must(s.r.Start()) })
	cam := s.track(0, ann, "video0", true, 1111)
	mic := s.track(0, annMic, "audio0", false, 2222)
	s.frames(cam, 0, 60_000, 1000.0/30, 30, nil, func(k int, _ float64) bool { return k%30 == 0 })
	s.frames(mic, 0, 60_000, 20, 10, nil, nil)
	s.run()
	s.waitError()
	s.mu.Lock()
	if len(s.errs) != 1 || !errors.Is(s.errs[0], syscall.ENOSPC) {
		t.Errorf("errors %v, want one ENOSPC", s.errs)
	}
	s.mu.Unlock()

	// The tap is cheap and never blocks now.
	before := s.r.Stats().Packets
	start := time.Now()
	s.frames(cam, 60_000, 70_000, 1000.0/30, 30, nil, nil)
	s.run()
	if st := s.r.Stats(); st.Packets != before || time.Since(start) > 2*time.Second {
		t.Errorf("after the failure: %d packets taken (%d before), %v", st.Packets, before, time.Since(start))
	}
	if err := s.r.Pause(); err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Pause after the failure: %v", err)
	}
	files, err := s.r.Stop()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Stop: %v, want ENOSPC", err)
	}
	if len(files) != 2 {
		t.Errorf("files %+v, want the 2 begun", files)
	}
	// What was written before the disk filled up reads back.
	blocks := 0
	for _, f := range files {
		data := s.st.data(f.Name)
		if f.Size != int64(len(data)) {
			t.Errorf("%s: size %d, %d bytes written", f.Name, f.Size, len(data))
		}
		if f.Size > 0 {
			blocks += len(readWebM(t, f.Name, data, true).blocks)
		}
	}
	if blocks == 0 {
		t.Error("no blocks were written")
	}
}

func TestCreateFails(t *testing.T) {
	s := newSim(t, Options{})
	s.st.failCreate = errors.New("permission denied")
	s.at(0, func() { s.must(s.r.Start()) })
	s.run()
	s.waitError()
	files, err := s.r.Stop()
	if err == nil || !strings.Contains(err.Error(), "events.jsonl: permission denied") || len(files) != 0 {
		t.Errorf("Stop: %v, %v", files, err)
	}
	s.mu.Lock()
	if len(s.errs) != 1 {
		t.Errorf("OnError got %v", s.errs)
	}
	s.mu.Unlock()
}

// TestPartialFile reads a file while it is being written, as a crash
// would leave it: what was flushed plays, with a Duration near its length.
func TestPartialFile(t *testing.T) {
	s := newSim(t, Options{})
	s.at(0, func() { s.must(s.r.Start()) })
	cam := s.track(0, ann, "video0", true, 1111)
	s.frames(cam, 0, 20_000, 1000.0/30, 30, nil, func(k int, _ float64) bool { return k%60 == 0 })
	s.run()
	// The flush comes within a second.
	const name = "ann-camera-s1-0-1.webm"
	var data []byte
	deadline := time.Now().Add(5 * time.Second)
	for {
		data = s.st.data(name)
		var doc webmFileDoc
		ebml.Unmarshal(bytes.NewReader(data), &doc)
		if cl := doc.Segment.Cluster; len(cl) > 0 && cl[len(cl)-1].Timecode >= 18_000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s, %d bytes flushed", len(data))
		}
		time.Sleep(50 * time.Millisecond)
	}
	p := readWebM(t, name, data, true)
	last := p.blocks[len(p.blocks)-1].t
	if p.duration < float64(last)-1500 || p.duration > float64(last)+1 {
		t.Errorf("a cut file says %.0f ms, its last block is at %d", p.duration, last)
	}
	if len(p.blocks) < 500 {
		t.Errorf("%d blocks", len(p.blocks))
	}
}

func TestEvents(t *testing.T) {
	st := newMemStorage()
	r := New(st, Options{Logger: testLogger()})
	defer r.Stop()
	r.Event("join", map[string]string{"user": "early"}) // before Start: not logged
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err == nil {
		t.Error("a second Start succeeded")
	}
	type chat struct {
		User string `json:"user"`
		Text string `json:"text"`
		T    int    `json:"t"` // the recorder's own field wins
	}
	r.Event("join", map[string]any{"user": "ann", "teacher": true})
	r.Event("chat", chat{"ann", "héllo \"all\"\n", 99})
	r.Event("slide", 3)
	r.Event("bad", func() {}) // not JSON: dropped
	written := time.Now()
	for {
		if n := bytes.Count(st.data(EventsFile), []byte("\n")); n == 4 {
			break
		}
		if time.Since(written) > 1500*time.Millisecond {
			t.Fatalf("events not flushed within 1.5 s: %q", st.data(EventsFile))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	r.Event("late", nil) // after Stop: not logged
	lines := strings.Split(strings.TrimSpace(string(st.data(EventsFile))), "\n")
	if len(lines) != 5 {
		t.Fatalf("lines %q", lines)
	}
	want := []string{
		`"type":"recording","action":"start","at":"`,
		`"type":"join","teacher":true,"user":"ann"}`,
		`"type":"chat","text":"héllo \"all\"\n","user":"ann"}`,
		`"type":"slide","data":3}`,
		`"type":"recording","action":"stop","segment":0}`,
	}
	for i, l := range lines {
		if !strings.Contains(l, want[i]) || !strings.HasPrefix(l, `{"t":`) {
			t.Errorf("line %d %s, want %s", i, l, want[i])
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Errorf("line %d: %v", i, err)
		} else if v["t"].(float64) > 5000 {
			t.Errorf("line %d at %v", i, v["t"])
		}
	}
}

func TestDirStorage(t *testing.T) {
	d := DirStorage{Dir: t.TempDir() + "/rec"}
	f, err := d.Create("a.webm")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "a.webm" {
		t.Errorf("Name %q", f.Name())
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.webm", "", "../x", "x/y", `x\y`, ".."} {
		if _, err := d.Create(name); err == nil {
			t.Errorf("Create(%q) succeeded", name)
		}
	}
}

// blockingStorage holds up the creation of WebM files until released.
type blockingStorage struct {
	*memStorage
	release chan struct{}
	// entered gets a value when a Create starts waiting for release.
	entered chan struct{}
}

func (b *blockingStorage) Create(name string) (File, error) {
	if strings.HasSuffix(name, ".webm") {
		select {
		case b.entered <- struct{}{}:
		default:
		}
		<-b.release
	}
	return b.memStorage.Create(name)
}

// TestStalledStorage holds the storage up while packets pour in: the tap
// never blocks, the packets past the queue are dropped (as lost), and the
// recording goes on from the next keyframe once the storage is back.
func TestStalledStorage(t *testing.T) {
	st := &blockingStorage{newMemStorage(), make(chan struct{}), make(chan struct{}, 1)}
	clk := newFakeClock()
	r := New(st, Options{Now: clk.now, Logger: testLogger()})
	defer r.Stop()
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	cam := &simTrack{info: ann, id: "video0", video: true, seq: 100, ts0: 5000, ssrc: 1, perMs: 90, width: 640, height: 480}
	r.TrackStarted(ann, "video0", cam.codec())
	send := func(from, to int) {
		for k := from; k < to; k++ {
			c := float64(k) * 20
			clk.set(c + 10)
			for _, p := range cam.packets(c, k%50 == 0, 300) {
				r.RTP(ann.ID, "video0", p)
			}
		}
	}
	began := time.Now()
	// The first keyframe makes the worker wait for Create, holding only
	// the batch it took; the rest fills the queue.
	k := 0
	for stalled := false; !stalled; k++ {
		send(k, k+1)
		select {
		case <-st.entered:
			stalled = true
		case <-time.After(10 * time.Millisecond):
		}
	}
	send(k, 12000)
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("12000 packets took %v to hand over", d)
	}
	// The worker stalls holding a batch it took, then the queue fills.
	dropped := r.Stats().Dropped
	if dropped == 0 || dropped > 12000-maxQueued {
		t.Errorf("stats %+v: want at most %d dropped", r.Stats(), 12000-maxQueued)
	}
	close(st.release)
	drain(r)
	send(12000, 12500)
	files, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("files %+v", files)
	}
	p := readWebM(t, files[0].Name, st.data(files[0].Name), false)
	// Up to the drop, the frames taken; after it, those from the
	// keyframe at 12000 (at 240 s).
	var before, after int
	for _, b := range p.blocks {
		if captured(b.data) < 240_000 {
			before++
		} else {
			after++
		}
	}
	if before < maxQueued || before > 12000-int(dropped) || after != 500 {
		t.Errorf("%d blocks before the drop (%d dropped), %d after; want at least %d, and 500", before, dropped, after, maxQueued)
	}
	if st := r.Stats(); st.Lost == 0 {
		t.Errorf("stats %+v: the dropped packets should count as lost", st)
	}
}

func TestStates(t *testing.T) {
	r := New(newMemStorage(), Options{Logger: testLogger()})
	for _, f := range []func() error{r.Pause, r.Resume} {
		if err := f(); err == nil || !strings.Contains(err.Error(), "not started") {
			t.Errorf("before Start: %v", err)
		}
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if err := r.Resume(); err == nil {
		t.Error("Resume while recording succeeded")
	}
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := r.Pause(); err == nil {
		t.Error("Pause while paused succeeded")
	}
	files, err := r.Stop()
	if err != nil || len(files) != 0 {
		t.Errorf("Stop: %v, %v", files, err)
	}
	if _, err := r.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := r.Start(); !errors.Is(err, ErrStopped) {
		t.Errorf("Start after Stop: %v", err)
	}
	// The tap is harmless after Stop.
	r.TrackStarted(ann, "video0", (&simTrack{video: true}).codec())
	r.TrackEnded(ann.ID, "video0")

	// A recorder never started stops at once.
	if files, err := New(newMemStorage(), Options{}).Stop(); err != nil || files != nil {
		t.Errorf("Stop without Start: %v, %v", files, err)
	}
}

// TestStreamRestarts: a camera turned off and on again (a new stream of
// the same publisher and label) goes on in the same file within a segment
// (and, with Join, across pauses), the time it was off cut out and told by
// Spans; a pause between them without Join starts a new file.
func TestStreamRestarts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		join  bool
		pause bool
		files int // camera files
	}{
		{"off and on", false, false, 1},
		{"off, pause, on", false, true, 2},
		{"off, pause, on, joined", true, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, Options{Join: tc.join})
			s.at(0, func() { s.must(s.r.Start()) })
			cam := s.track(0, ann, "video0", true, 1111)
			mic := s.track(0, annMic, "audio0", false, 2222)
			keys := func(k int, _ float64) bool { return k%30 == 0 }
			s.frames(cam, 0, 3000, 1000.0/30, 30, nil, keys)
			s.reports(cam, 0, 3000, 1000, 5, ntpBase)
			s.at(3100, func() { s.r.TrackEnded(ann.ID, "video0") })
			s.frames(mic, 0, 8000, 20, 10, nil, nil)
			s.reports(mic, 0, 8000, 1000, 5, ntpBase)
			if tc.pause {
				s.at(4000, func() { s.must(s.r.Pause()) })
				s.at(4500, func() { s.must(s.r.Resume()) })
			}
			again := ann
			again.ID, again.ClientID = "s3", "cam2"
			cam2 := s.track(5000, again, "video0", true, 3333)
			s.frames(cam2, 5000, 8000, 1000.0/30, 30, nil, keys)
			s.reports(cam2, 5000, 8000, 1000, 5, ntpBase)
			s.at(8100, func() {})
			s.run()
			files := s.stop()
			var camFiles []FileInfo
			for _, f := range files {
				if f.Label == "camera" {
					camFiles = append(camFiles, f)
				}
			}
			if len(camFiles) != tc.files || len(files) != tc.files+1+btoi(tc.pause && !tc.join) {
				t.Fatalf("%d camera files of %d, want %d: %+v", len(camFiles), len(files), tc.files, files)
			}
			if tc.files != 1 {
				return
			}
			f := camFiles[0]
			if f.StreamID != ann.ID || len(f.Spans) != 2 || f.Spans[0].EndMs < 2990 || f.Spans[0].EndMs > 3060 || f.Spans[1].StartMs < 5000 || f.Spans[1].StartMs > 5050 {
				t.Fatalf("%s (stream %s): spans %v, want about [0 3020] [5005 8000]", f.Name, f.StreamID, f.Spans)
			}
			if want := f.Spans[0].EndMs - f.Spans[0].StartMs + f.Spans[1].EndMs - f.Spans[1].StartMs; abs64(f.DurationMs-want) > 40 {
				t.Errorf("%s: %d ms, the spans hold %d", f.Name, f.DurationMs, want)
			}
			// Each block plays, through the spans, when it was captured
			// (+5 ms, the reports' delay).
			p := s.read(f)
			streams := map[bool]int{}
			for i, b := range p.blocks {
				if i > 0 && b.t <= p.blocks[i-1].t {
					t.Fatalf("%s: block %d at %d after %d", f.Name, i, b.t, p.blocks[i-1].t)
				}
				rec := spanTime(f.Spans, b.t)
				if d := float64(rec) - captured(b.data); math.Abs(d-5) > 2 {
					t.Fatalf("%s: block captured at %.1f plays at %d", f.Name, captured(b.data), rec)
				}
				streams[captured(b.data) >= 5000]++
			}
			if streams[false] < 85 || streams[true] < 85 {
				t.Errorf("%s: %d blocks of the first stream, %d of the second", f.Name, streams[false], streams[true])
			}
		})
	}
}

// spanTime maps a file's time (ms from its start) to the recording clock
// through its spans.
func spanTime(spans []Span, ft int64) int64 {
	acc := int64(0)
	for i, sp := range spans {
		n := sp.EndMs - sp.StartMs
		if ft < acc+n || i == len(spans)-1 {
			return sp.StartMs + ft - acc
		}
		acc += n
	}
	return -1
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func abs64(x int64) int64 { return max(x, -x) }
