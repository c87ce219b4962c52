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

	"github.com/lectern-lms/lectern/internal/classroom/record"
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

// piece is a stretch of a file placed on the recording clock: file time
// from..to (ms; to -1 is the file's end) plays at at.
type piece struct{ from, to, at int64 }

// pieces cuts a file into the stretches its spans place on the recording
// clock (spans as record.FileInfo has them, on the export's clock): one
// piece from StartMS without spans or with one.
func pieces(f lms.RecordingFile, spans []record.Span) []piece {
	if len(spans) < 2 {
		return []piece{{0, -1, f.StartMS}}
	}
	var out []piece
	var acc int64
	for i, sp := range spans {
		n := sp.EndMs - sp.StartMs
		p := piece{acc, acc + n, sp.StartMs}
		if i == len(spans)-1 {
			p.to = -1
		}
		out = append(out, p)
		acc += n
	}
	return out
}

// trim is the ffmpeg filter that keeps a piece of a stream (prefix "a"
// for audio), or "" for a whole file.
func (p piece) trim(prefix string) string {
	switch {
	case p.from == 0 && p.to < 0:
		return ""
	case p.to < 0:
		return fmt.Sprintf("%strim=start=%.3f,", prefix, float64(p.from)/1000)
	}
	return fmt.Sprintf("%strim=start=%.3f:end=%.3f,", prefix, float64(p.from)/1000, float64(p.to)/1000)
}

// split names the n copies of input stream in ("[0:v]") that ffmpeg's
// split (or asplit) makes, adding the filter when n > 1.
func split(filters *[]string, in, kind, name string, n int) []string {
	if n == 1 {
		return []string{in}
	}
	outs := make([]string, n)
	for k := range outs {
		outs[k] = fmt.Sprintf("[%s%d]", name, k)
	}
	f := "split"
	if kind == "a" {
		f = "asplit"
	}
	*filters = append(*filters, fmt.Sprintf("%s%s=%d%s", in, f, n, strings.Join(outs, "")))
	return outs
}

// args builds the ffmpeg command line. Each input is placed at its start
// on the recording clock (setpts for video, adelay for audio), or, for a
// file with cuts (spans), each of its pieces at its own; progress goes to
// stdout (-progress).
func (e *Exporter) args(dir string, main, corner *lms.RecordingFile, audio []lms.RecordingFile, spans map[string][]record.Span, durationMS int64, out string) []string {
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
	overlay := func(f lms.RecordingFile, name, scale, pos string) {
		i := input(f)
		ps := pieces(f, spans[f.BlobKey])
		ins := split(&filters, fmt.Sprintf("[%d:v]", i), "v", name+"in", len(ps))
		for k, p := range ps {
			piece := fmt.Sprintf("[%s%d]", name, k)
			filters = append(filters, fmt.Sprintf("%s%s%s,setpts=PTS-STARTPTS+%.3f/TB%s", ins[k], p.trim(""), scale, float64(p.at)/1000, piece))
			next := fmt.Sprintf("[%s%dv]", name, k)
			filters = append(filters, fmt.Sprintf("%s%soverlay=%s:eof_action=pass%s", last, piece, pos, next))
			last = next
		}
	}
	if main != nil {
		overlay(*main, "main", fmt.Sprintf("scale=%d:%d:force_original_aspect_ratio=decrease", w, h), "(W-w)/2:(H-h)/2")
	}
	if corner != nil {
		overlay(*corner, "corner", fmt.Sprintf("scale=%d:-2", w/4), "W-w-16:H-h-16")
	}
	var mix []string
	for _, f := range audio {
		i := input(f)
		ps := pieces(f, spans[f.BlobKey])
		ins := split(&filters, fmt.Sprintf("[%d:a]", i), "a", fmt.Sprintf("ain%d_", i), len(ps))
		for k, p := range ps {
			ms := max(p.at, 0)
			name := fmt.Sprintf("[a%d_%d]", i, k)
			filters = append(filters, fmt.Sprintf("%s%sasetpts=PTS-STARTPTS,adelay=%d|%d,aresample=48000%s", ins[k], p.trim("a"), ms, ms, name))
			mix = append(mix, name)
		}
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
// blob folder) to out, reporting progress (0-100) as it goes. spans are
// the stretches of the recording clock of the files with cuts (a pause
// with isVideo 1, a camera turned off and on), by blob key, on the same
// clock as the files' StartMS; nil when none has.
func (e *Exporter) Export(ctx context.Context, root string, files []lms.RecordingFile, spans map[string][]record.Span,
	teachers map[string]bool, durationMS int64, out string, progress func(percent int)) error {
	main, corner, audio := exportInputs(files, teachers)
	if main == nil && len(audio) == 0 {
		return fmt.Errorf("the recording has no audio or video")
	}
	if durationMS <= 0 {
		return fmt.Errorf("the recording has no length")
	}
	ctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.FFmpeg, e.args(root, main, corner, audio, spans, durationMS, out)...)
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
