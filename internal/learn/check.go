package learn

import (
	"net/url"
	"slices"
	"strings"

	"github.com/lectern-lms/lectern/internal/lms"
)

// MaxBodyMD bounds a lesson's Markdown, in bytes.
const MaxBodyMD = 256 << 10

// LessonFields names, per lesson type, the type-specific fields it uses
// (by API parameter name). body_md and duration_s are open to every type
// (an introduction; an estimated length).
var LessonFields = map[string][]string{
	lms.LessonText:      {},
	lms.LessonVideo:     {"file_id"},
	lms.LessonAudio:     {"file_id"},
	lms.LessonFile:      {"file_id"},
	lms.LessonEmbed:     {"embed_provider", "embed_id", "embed_url"},
	lms.LessonLiveClass: {"class_id", "class_sitting"},
	lms.LessonTest:      {"test_id"},
}

// TypeSpecificFields are every type-specific field name.
var TypeSpecificFields = []string{"file_id", "embed_provider", "embed_id", "embed_url", "class_id", "class_sitting", "test_id"}

// FieldFor reports whether a type-specific field belongs to a type.
func FieldFor(typ, field string) bool { return slices.Contains(LessonFields[typ], field) }

// TypesWith lists the types a type-specific field belongs to, for messages.
func TypesWith(field string) string {
	var out []string
	for _, t := range lms.LessonTypes {
		if FieldFor(t, field) {
			out = append(out, t)
		}
	}
	return strings.Join(out, ", ")
}

// Normalise clears the type-specific fields a lesson's type does not use
// (after a change of type).
func Normalise(l *lms.Lesson) {
	if !FieldFor(l.Type, "file_id") {
		l.FileID = 0
	}
	if !FieldFor(l.Type, "embed_id") {
		l.EmbedProvider, l.EmbedID = "", ""
	}
	if !FieldFor(l.Type, "class_id") {
		l.ClassID, l.ClassSeq = 0, 0
	}
	if !FieldFor(l.Type, "test_id") {
		l.TestID = 0
	}
}

// CheckLesson records in v what a lesson of its type lacks or has wrong,
// by API parameter name.
func CheckLesson(l lms.Lesson, v *lms.Validator) {
	v.Check(strings.TrimSpace(l.Title) != "", "title", "is required")
	v.Check(len(l.Title) <= 255, "title", "must be at most 255 characters")
	if !slices.Contains(lms.LessonTypes, l.Type) {
		v.Add("type", "must be one of "+strings.Join(lms.LessonTypes, ", "))
		return
	}
	v.Check(len(l.BodyMD) <= MaxBodyMD, "body_md", "must be at most 262144 bytes")
	v.Check(l.DurationS >= 0, "duration_s", "must not be negative")
	switch l.Type {
	case lms.LessonVideo, lms.LessonAudio:
		v.Check(l.FileID != 0, "file_id", "is required for "+l.Type+" lessons (upload with POST /files/upload)")
		v.Check(l.DurationS > 0, "duration_s", "is required for "+l.Type+" lessons: the length in seconds, which completion (90% watched) is measured against")
	case lms.LessonFile:
		v.Check(l.FileID != 0, "file_id", "is required for file lessons (upload with POST /files/upload)")
	case lms.LessonEmbed:
		switch l.EmbedProvider {
		case lms.EmbedYouTube, lms.EmbedVimeo:
			v.Check(lms.ValidEmbed(l.EmbedProvider, l.EmbedID), "embed_id",
				"must be a "+l.EmbedProvider+" video id (YouTube: 11 characters of A-Z a-z 0-9 _ -; Vimeo: digits), not a URL or HTML")
		default:
			v.Add("embed_provider", "must be youtube or vimeo")
		}
	case lms.LessonLiveClass:
		v.Check(l.ClassID != 0, "class_id", "is required for live_class lessons")
		v.Check(l.ClassSeq >= 0, "class_sitting", "must not be negative")
	case lms.LessonTest:
		v.Check(l.TestID != 0, "test_id", "is required for test lessons")
	}
}

// ParseEmbedURL reads the provider and video id out of a YouTube or Vimeo
// address an administrator pasted (watch, short, embed and share forms).
// ok is false for anything else; the id is still checked by CheckLesson.
func ParseEmbedURL(raw string) (provider, id string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", "", false
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	host = strings.TrimPrefix(host, "m.")
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch host {
	case "youtube.com", "youtube-nocookie.com", "music.youtube.com":
		switch {
		case len(parts) == 1 && parts[0] == "watch":
			id = u.Query().Get("v")
		case len(parts) == 2 && (parts[0] == "embed" || parts[0] == "shorts" || parts[0] == "live" || parts[0] == "v"):
			id = parts[1]
		}
		provider = lms.EmbedYouTube
	case "youtu.be":
		if len(parts) == 1 {
			id = parts[0]
		}
		provider = lms.EmbedYouTube
	case "vimeo.com":
		if len(parts) >= 1 {
			id = parts[0]
		}
		provider = lms.EmbedVimeo
	case "player.vimeo.com":
		if len(parts) == 2 && parts[0] == "video" {
			id = parts[1]
		}
		provider = lms.EmbedVimeo
	default:
		return "", "", false
	}
	if !lms.ValidEmbed(provider, id) {
		return "", "", false
	}
	return provider, id, true
}
