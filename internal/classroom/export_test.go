package classroom_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/classroom"
	"github.com/lectern-lms/lectern/internal/classroom/record"
	"github.com/lectern-lms/lectern/internal/lms"
)

// needFFmpeg returns the exporter, skipping without ffmpeg outside CI
// and failing under CI (.ci/run installs it).
func needFFmpeg(t *testing.T) *classroom.Exporter {
	e := classroom.FindExporter()
	_, probeErr := exec.LookPath("ffprobe")
	if e == nil || probeErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg and ffprobe must be installed under CI")
		}
		t.Skip("ffmpeg not installed: the MP4 export test is skipped (install ffmpeg to run it)")
	}
	return e
}

func TestExportMP4(t *testing.T) {
	e := needFFmpeg(t)
	root := t.TempDir()
	gen := func(name string, args ...string) {
		cmd := exec.Command("ffmpeg", append([]string{"-hide_banner", "-loglevel", "error", "-y"}, append(args, filepath.Join(root, name))...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %s: %v %s", name, err, out)
		}
	}
	gen("cam.webm", "-f", "lavfi", "-i", "testsrc=s=320x240:r=15:d=3", "-c:v", "libvpx", "-b:v", "200k")
	gen("screen.webm", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=15:d=2", "-c:v", "libvpx", "-b:v", "200k")
	gen("mic.webm", "-f", "lavfi", "-i", "sine=f=440:d=3", "-c:a", "libopus")
	gen("mic2.webm", "-f", "lavfi", "-i", "sine=f=660:d=2", "-c:a", "libopus")
	files := []lms.RecordingFile{
		{Role: "media", BlobKey: "cam.webm", UserRef: "t", Label: "camera", ContentType: `video/webm; codecs="vp8"`, StartMS: 0},
		{Role: "media", BlobKey: "screen.webm", UserRef: "t", Label: "screen", ContentType: `video/webm; codecs="vp8"`, StartMS: 1000},
		{Role: "media", BlobKey: "mic.webm", UserRef: "t", Label: "mic", ContentType: `audio/webm; codecs="opus"`, StartMS: 0},
		{Role: "media", BlobKey: "mic2.webm", UserRef: "s", Label: "mic", ContentType: `audio/webm; codecs="opus"`, StartMS: 500},
		{Role: "events", BlobKey: "events.jsonl"},
	}
	out := filepath.Join(root, "out.mp4")
	var seen []int
	if err := e.Export(context.Background(), root, files, nil, map[string]bool{"t": true}, 3000, out, func(p int) { seen = append(seen, p) }); err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 || seen[len(seen)-1] != 100 {
		t.Errorf("progress %v", seen)
	}
	probe, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "format=duration:stream=codec_name,width,height",
		"-of", "json", out).Output()
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Format  struct{ Duration string }
		Streams []struct {
			CodecName     string `json:"codec_name"`
			Width, Height int
		}
	}
	json.Unmarshal(probe, &info)
	d, _ := strconv.ParseFloat(info.Format.Duration, 64)
	if len(info.Streams) != 2 || info.Streams[0].CodecName != "h264" || info.Streams[0].Width != 1280 ||
		info.Streams[0].Height != 720 || info.Streams[1].CodecName != "aac" || d < 2.9 || d > 3.2 {
		t.Fatalf("export: %s", probe)
	}
	// Nothing to export is an error, not an empty file.
	if err := e.Export(context.Background(), root, files[4:], nil, nil, 3000, filepath.Join(root, "none.mp4"), nil); err == nil {
		t.Fatal("exported a recording without media")
	}
}

// TestExportCuts: a file with cuts (a camera turned off for a second, or a
// pause with isVideo 1) plays each of its pieces at its place: black and
// silent in the cut, picture and sound on both sides.
func TestExportCuts(t *testing.T) {
	e := needFFmpeg(t)
	root := t.TempDir()
	gen := func(name string, args ...string) {
		cmd := exec.Command("ffmpeg", append([]string{"-hide_banner", "-loglevel", "error", "-y"}, append(args, filepath.Join(root, name))...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %s: %v %s", name, err, out)
		}
	}
	gen("cam.webm", "-f", "lavfi", "-i", "color=c=white:s=320x240:r=15:d=3", "-c:v", "libvpx", "-b:v", "200k")
	gen("mic.webm", "-f", "lavfi", "-i", "sine=f=440:d=3", "-c:a", "libopus")
	files := []lms.RecordingFile{
		{Role: "media", BlobKey: "cam.webm", UserRef: "t", Label: "camera", ContentType: `video/webm; codecs="vp8"`, StartMS: 0},
		{Role: "media", BlobKey: "mic.webm", UserRef: "t", Label: "mic", ContentType: `audio/webm; codecs="opus"`, StartMS: 0},
	}
	cut := []record.Span{{StartMs: 0, EndMs: 1000}, {StartMs: 2000, EndMs: 4000}}
	out := filepath.Join(root, "out.mp4")
	if err := e.Export(context.Background(), root, files, map[string][]record.Span{"cam.webm": cut, "mic.webm": cut}, map[string]bool{"t": true}, 4000, out, nil); err != nil {
		t.Fatal(err)
	}
	brightness := func(at float64) int {
		b, err := exec.Command("ffmpeg", "-v", "error", "-ss", strconv.FormatFloat(at, 'f', 2, 64), "-i", out, "-frames:v", "1",
			"-vf", "scale=1:1", "-f", "rawvideo", "-pix_fmt", "gray", "-").Output()
		if err != nil || len(b) != 1 {
			t.Fatalf("frame at %.2f: %v %v", at, err, b)
		}
		return int(b[0])
	}
	loud := func(from, to float64) bool {
		b, err := exec.Command("ffmpeg", "-v", "info", "-i", out, "-af", fmt.Sprintf("atrim=%.2f:%.2f,volumedetect", from, to), "-f", "null", "-").CombinedOutput()
		if err != nil {
			t.Fatalf("volume: %v %s", err, b)
		}
		return !strings.Contains(string(b), "max_volume: -91") && strings.Contains(string(b), "max_volume:")
	}
	for _, tc := range []struct {
		at    float64
		shown bool
	}{{0.5, true}, {1.5, false}, {2.5, true}, {3.7, true}} {
		if got := brightness(tc.at) > 128; got != tc.shown {
			t.Errorf("at %.1f s: picture %v, want %v", tc.at, got, tc.shown)
		}
	}
	if !loud(0.2, 0.8) || loud(1.2, 1.8) || !loud(2.2, 3.8) {
		t.Errorf("sound: 0.2-0.8 s %v, 1.2-1.8 s %v (want silent), 2.2-3.8 s %v", loud(0.2, 0.8), loud(1.2, 1.8), loud(2.2, 3.8))
	}
}
