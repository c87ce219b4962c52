package classroom

import (
	"testing"

	"github.com/lectern-lms/lectern/internal/lms"
)

func TestMainFile(t *testing.T) {
	cam := func(name, user string, ms int64) lms.RecordingFile {
		return lms.RecordingFile{Role: "media", Name: name, UserRef: user, Label: "camera", ContentType: `video/webm; codecs="vp8"`, DurationMS: ms}
	}
	teachers := map[string]bool{"t": true}
	for _, tc := range []struct {
		name  string
		files []lms.RecordingFile
		want  string
	}{
		{"the longest piece of the teacher's camera", []lms.RecordingFile{cam("one-frame", "t", 0), cam("ramp", "t", 900), cam("rest", "t", 19000), cam("student", "s", 20000)}, "rest"},
		{"the teacher's screen first", []lms.RecordingFile{cam("cam", "t", 20000), {Role: "media", Name: "screen", UserRef: "t", Label: "screen", ContentType: "video/webm", DurationMS: 5000}}, "screen"},
		{"a student's video before audio", []lms.RecordingFile{{Role: "media", Name: "mic", UserRef: "t", Label: "mic", ContentType: "audio/webm", DurationMS: 20000}, cam("student", "s", 100)}, "student"},
		{"the teacher's tab (isRecordingLayout 1) before the screen", []lms.RecordingFile{
			{Role: "media", Name: "screen", UserRef: "t", Label: "screen", ContentType: "video/webm", DurationMS: 20000},
			{Role: "media", Name: "tab", UserRef: "t", Label: "recording", ContentType: "video/webm", DurationMS: 15000}, cam("cam", "t", 20000)}, "tab"},
		{"the event log when nothing else", []lms.RecordingFile{{Role: "events", Name: "events.jsonl"}}, "events.jsonl"},
	} {
		if got := mainFile(tc.files, teachers).Name; got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
