package classroom

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/lms"
)

// Exporter composes a recording into one MP4 (H.264 and AAC): the
// teacher's screen with the teacher's camera in a corner (or the camera
// alone), every voice mixed, 1280x720. It runs ffmpeg, outside the media
// path, after the recording is finished.
type Exporter struct {
	// FFmpeg is the ffmpeg program.
	FFmpeg string
	// Width and Height of the video (default 1280x720).
	Width, Height int
	// Timeout bounds one export.
	Timeout time.Duration
}

// FindExporter returns an Exporter when ffmpeg is installed, else nil.
func FindExporter() *Exporter {
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil
	}
	return &Exporter{FFmpeg: p, Width: 1280, Height: 720, Timeout: 2 * time.Hour}
}

// exportInputs picks what goes into the MP4: the main video (the
// teacher's tab for isRecordingLayout 1, else the teacher's screen, else
// the teacher's camera, else any camera), the
// teacher's camera as a corner picture when the screen is main, and every
// audio track.
func exportInputs(files []lms.RecordingFile, teachers map[string]bool) (main, corner *lms.RecordingFile, audio []lms.RecordingFile) {
	rank := func(f lms.RecordingFile) int {
		switch {
		case f.Label == room.LabelRecording:
			return 0
		case teachers[f.UserRef] && f.Label == room.LabelScreen:
			return 1
		case teachers[f.UserRef] && f.Label == room.LabelCamera:
			return 2
		case f.Label == room.LabelScreen:
			return 3
		}
		return 4
	}
	for i := range files {
		f := &files[i]
		if f.Role != "media" {
			continue
		}
		// Recorded files name their codecs: a screen may carry sound.
		if strings.Contains(f.ContentType, "opus") {
			audio = append(audio, *f)
		}
		if !strings.HasPrefix(f.ContentType, "video/") {
			continue
		}
		if main == nil || rank(*f) < rank(*main) {
			main = f
		}
	}
	if main != nil && main.Label == room.LabelScreen {
		for i := range files {
			f := &files[i]
			if f.Role == "media" && f.Label == room.LabelCamera && f.UserRef == main.UserRef {
				corner = f
			}
		}
	}
	return main, corner, audio
}

// args builds the ffmpeg command line. Each input is placed at its start
// on the recording clock (setpts for video, adelay for audio); progress
// goes to stdout (-progress).
func (e *Exporter) args(dir string, main, corner *lms.RecordingFile, audio []lms.RecordingFile, durationMS int64, out string) []string {
	a := []string{"-hide_banner", "-nostdin", "-y", "-progress", "pipe:1", "-nostats", "-loglevel", "error"}
	n := 0
	input := func(f lms.RecordingFile) int {
		a = append(a, "-i", filepath.Join(dir, filepath.FromSlash(f.BlobKey)))
		n++
		return n - 1
	}
	w, h := e.Width, e.Height
	var filters []string
	// A black canvas the length of the recording, the videos over it.
	filters = append(filters, fmt.Sprintf("color=c=black:s=%dx%d:r=25:d=%.3f[bg]", w, h, float64(durationMS)/1000))
	last := "[bg]"
	if main != nil {
		i := input(*main)
		filters = append(filters, fmt.Sprintf("[%d:v]scale=%d:%d:force_original_aspect_ratio=decrease,setpts=PTS-STARTPTS+%.3f/TB[main]", i, w, h, float64(main.StartMS)/1000))
		filters = append(filters, fmt.Sprintf("%s[main]overlay=(W-w)/2:(H-h)/2:eof_action=pass[v1]", last))
		last = "[v1]"
	}
	if corner != nil {
		i := input(*corner)
		filters = append(filters, fmt.Sprintf("[%d:v]scale=%d:-2,setpts=PTS-STARTPTS+%.3f/TB[corner]", i, w/4, float64(corner.StartMS)/1000))
		filters = append(filters, fmt.Sprintf("%s[corner]overlay=W-w-16:H-h-16:eof_action=pass[v2]", last))
		last = "[v2]"
	}
	var mix []string
	for _, f := range audio {
		i := input(f)
		ms := max(f.StartMS, 0)
		filters = append(filters, fmt.Sprintf("[%d:a]adelay=%d|%d,aresample=48000[a%d]", i, ms, ms, i))
		mix = append(mix, fmt.Sprintf("[a%d]", i))
	}
	maps := []string{"-map", last}
	if len(mix) > 0 {
		filters = append(filters, fmt.Sprintf("%samix=inputs=%d:duration=longest:normalize=0[aout]", strings.Join(mix, ""), len(mix)))
		maps = append(maps, "-map", "[aout]")
	}
	a = append(a, "-filter_complex", strings.Join(filters, ";"))
	a = append(a, maps...)
	a = append(a, "-t", strconv.FormatFloat(float64(durationMS)/1000, 'f', 3, 64),
		"-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k",
		"-movflags", "+faststart", out)
	return a
}

// Export writes the MP4 of a recording whose files are under root (the
// blob folder) to out, reporting progress (0-100) as it goes.
func (e *Exporter) Export(ctx context.Context, root string, files []lms.RecordingFile, teachers map[string]bool,
	durationMS int64, out string, progress func(percent int)) error {
	main, corner, audio := exportInputs(files, teachers)
	if main == nil && len(audio) == 0 {
		return fmt.Errorf("the recording has no audio or video")
	}
	if durationMS <= 0 {
		return fmt.Errorf("the recording has no length")
	}
	ctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.FFmpeg, e.args(root, main, corner, audio, durationMS, out)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		if k == "out_time_us" {
			if us, err := strconv.ParseInt(v, 10, 64); err == nil && progress != nil {
				progress(int(min(99, max(0, us/10/durationMS))))
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		os.Remove(out)
		return fmt.Errorf("ffmpeg: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if progress != nil {
		progress(100)
	}
	return nil
}
