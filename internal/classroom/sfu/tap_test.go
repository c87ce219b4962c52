package sfu

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// fakeTap records what a Tap is told.
type fakeTap struct {
	mu      sync.Mutex
	calls   []string          // "start s1 video0 camera ann video/VP8", "end s1 video0"
	started map[string]bool   // running tracks, "s1/video0"
	packets map[string]int    // RTP packets, by track
	ssrc    map[string]uint32 // SSRC of the last packet, by track
	srs     map[string][]rtcp.SenderReport
	errs    []string
}

func newFakeTap() *fakeTap {
	return &fakeTap{started: map[string]bool{}, packets: map[string]int{}, ssrc: map[string]uint32{}, srs: map[string][]rtcp.SenderReport{}}
}

func (f *fakeTap) TrackStarted(s StreamInfo, track string, codec webrtc.RTPCodecParameters) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := s.ID + "/" + track
	if f.started[key] {
		f.errs = append(f.errs, "second TrackStarted for "+key)
	}
	f.started[key] = true
	f.calls = append(f.calls, fmt.Sprintf("start %s %s %s %s %s", s.ID, track, s.Label, s.UserID, codec.MimeType))
}

func (f *fakeTap) RTP(stream, track string, p *rtp.Packet) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := stream + "/" + track
	if !f.started[key] {
		return // a replaced tap may get packets under way
	}
	f.packets[key]++
	f.ssrc[key] = p.SSRC
}

func (f *fakeTap) SenderReport(stream, track string, sr rtcp.SenderReport) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := stream + "/" + track
	if !f.started[key] {
		f.errs = append(f.errs, "sender report outside the track's life: "+key)
	}
	f.srs[key] = append(f.srs[key], sr)
}

func (f *fakeTap) TrackEnded(stream, track string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := stream + "/" + track
	if !f.started[key] {
		f.errs = append(f.errs, "TrackEnded without TrackStarted for "+key)
	}
	delete(f.started, key)
	f.calls = append(f.calls, "end "+key)
}

func (f *fakeTap) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.packets[key]
}

func (f *fakeTap) reports(key string) []rtcp.SenderReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.srs[key])
}

func (f *fakeTap) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeTap) check(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.errs {
		t.Error(e)
	}
}

func TestTap(t *testing.T) {
	s := newTestSFU(t)
	h := newHarness(t, s)
	ann := h.join("c1", "ann", false)
	bob := h.join("c2", "bob", true)

	// A tap set before anything is published hears every track start.
	first := newFakeTap()
	h.room.SetTap(first)
	cam, camPub, err := ann.publish("cam", "camera", webrtc.RTPCodecTypeVideo)
	if err != nil {
		t.Fatal(err)
	}
	screen, _, err := ann.publish("scr", "screen", webrtc.RTPCodecTypeVideo, webrtc.RTPCodecTypeAudio)
	if err != nil {
		t.Fatal(err)
	}
	tracks := []string{cam + "/video0", screen + "/video0", screen + "/audio1"}
	for _, k := range tracks {
		eventually(t, "tapped packets on "+k, func() bool { return first.count(k) >= 20 })
	}
	eventually(t, "subscriber media", func() bool { return bob.received(cam) > 0 && bob.received(screen) > 0 })
	if got := first.log(); !slices.Contains(got, "start "+cam+" video0 camera ann video/VP8") ||
		!slices.Contains(got, "start "+screen+" audio1 screen ann audio/opus") {
		t.Errorf("calls %q", got)
	}

	// Sender reports come for the track's own SSRC (pion sends one a
	// second).
	for _, k := range []string{cam + "/video0", screen + "/audio1"} {
		eventually(t, "a sender report on "+k, func() bool { return len(first.reports(k)) > 0 })
		first.mu.Lock()
		sr, ssrc := first.srs[k][0], first.ssrc[k]
		first.mu.Unlock()
		if sr.SSRC != ssrc || sr.NTPTime == 0 {
			t.Errorf("%s: sender report %+v, media SSRC %d", k, sr, ssrc)
		}
	}

	// A keyframe request reaches the publisher; one for an audio-only or
	// unknown stream does nothing.
	plis := camPub.pli.Load()
	h.room.RequestKeyframe(cam)
	eventually(t, "a PLI at the publisher", func() bool { return camPub.pli.Load() > plis })
	h.room.RequestKeyframe("s999")

	// A second tap gets the running tracks replayed; the first one has
	// them ended.
	second := newFakeTap()
	h.room.SetTap(second)
	want := []string{
		"start " + cam + " video0 camera ann video/VP8",
		"start " + screen + " video0 screen ann video/VP8",
		"start " + screen + " audio1 screen ann audio/opus",
	}
	if got := second.log(); !slices.Equal(got, want) {
		t.Errorf("replayed calls %q, want %q", got, want)
	}
	for _, k := range tracks {
		if !slices.Contains(first.log(), "end "+k) {
			t.Errorf("the replaced tap did not get the end of %s", k)
		}
	}
	before := first.count(cam + "/video0")
	for _, k := range tracks {
		eventually(t, "packets at the second tap on "+k, func() bool { return second.count(k) >= 10 })
	}
	if n := first.count(cam + "/video0"); n != before {
		t.Errorf("the replaced tap counted %d more packets", n-before)
	}

	// A publication that ends ends its tracks.
	h.room.CloseStream(cam)
	eventually(t, "the end of the camera", func() bool { return slices.Contains(second.log(), "end "+cam+"/video0") })

	// Removing the tap ends the rest; nothing follows.
	h.room.SetTap(nil)
	for _, k := range []string{screen + "/video0", screen + "/audio1"} {
		if !slices.Contains(second.log(), "end "+k) {
			t.Errorf("the removed tap did not get the end of %s", k)
		}
	}
	n := len(second.log())
	h.room.RemoveConn("c1")
	eventually(t, "the screen to close at the subscriber", func() bool { return bob.closed(screen) })
	if got := second.log(); len(got) != n {
		t.Errorf("calls after the tap was removed: %q", got[n:])
	}
	first.check(t)
	second.check(t)
}

// TestTapLateTrack checks that a track starting after SetTap is told to
// the tap, and that a room's closing ends its tracks.
func TestTapLateTrack(t *testing.T) {
	s := newTestSFU(t)
	h := newHarness(t, s)
	ann := h.join("c1", "ann", false)
	mic, _, err := ann.publish("mic", "mic", webrtc.RTPCodecTypeAudio)
	if err != nil {
		t.Fatal(err)
	}
	tap := newFakeTap()
	h.room.SetTap(tap)
	eventually(t, "tapped audio", func() bool { return tap.count(mic+"/audio0") > 0 })
	if got := tap.log(); len(got) != 1 || got[0] != "start "+mic+" audio0 mic ann audio/opus" {
		t.Errorf("calls %q", got)
	}
	h.room.Close()
	eventually(t, "the end of the microphone", func() bool { return slices.Contains(tap.log(), "end "+mic+"/audio0") })
	tap.check(t)
}
