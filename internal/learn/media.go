package learn

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/lms"
)

// DefaultMediaTTL is how long a media link in a LessonView works.
const DefaultMediaTTL = 2 * time.Hour

// MediaPath is where media links point (then the token).
const MediaPath = "/media/"

// media tokens are base64url(domain|user|lesson|expires as 4 big-endian
// uint64) + "." + base64url(HMAC-SHA256 of those bytes under a key derived
// from the server secret for this purpose).
var errBadToken = errors.New("media link is invalid")

func (s *Service) mediaKey() []byte {
	m := hmac.New(sha256.New, s.Secret)
	m.Write([]byte("learn-media-v1"))
	return m.Sum(nil)
}

// MediaURL returns a signed path (under the server's root) to a lesson's
// media for a learner (userID 0: a visitor on a free preview), working
// for ttl. The handler re-checks the lesson's lock on every request.
func (s *Service) MediaURL(domainID, userID, lessonID int64, ttl time.Duration) string {
	exp := s.now().Add(ttl).Unix()
	b := make([]byte, 32)
	binary.BigEndian.PutUint64(b[0:], uint64(domainID))
	binary.BigEndian.PutUint64(b[8:], uint64(userID))
	binary.BigEndian.PutUint64(b[16:], uint64(lessonID))
	binary.BigEndian.PutUint64(b[24:], uint64(exp))
	m := hmac.New(sha256.New, s.mediaKey())
	m.Write(b)
	enc := base64.RawURLEncoding
	return MediaPath + enc.EncodeToString(b) + "." + enc.EncodeToString(m.Sum(nil))
}

// openMediaToken checks a token's signature and expiry.
func (s *Service) openMediaToken(token string, now time.Time) (domainID, userID, lessonID int64, err error) {
	payload, sig, ok := strings.Cut(token, ".")
	enc := base64.RawURLEncoding
	b, err1 := enc.DecodeString(payload)
	got, err2 := enc.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil || len(b) != 32 || len(s.Secret) == 0 {
		return 0, 0, 0, errBadToken
	}
	m := hmac.New(sha256.New, s.mediaKey())
	m.Write(b)
	if !hmac.Equal(m.Sum(nil), got) {
		return 0, 0, 0, errBadToken
	}
	if now.Unix() >= int64(binary.BigEndian.Uint64(b[24:])) {
		return 0, 0, 0, errBadToken
	}
	return int64(binary.BigEndian.Uint64(b[0:])), int64(binary.BigEndian.Uint64(b[8:])), int64(binary.BigEndian.Uint64(b[16:])), nil
}

// Register adds the media route: GET MediaPath{token}.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+MediaPath+"{token}", s.serveMedia)
}

// serveMedia serves a lesson's media behind a signed link, with Range
// support. The lesson's lock is checked again on every request, so a
// link handed out before a lesson was locked (or a link to a locked
// lesson) gives 403.
func (s *Service) serveMedia(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	domainID, userID, lessonID, err := s.openMediaToken(r.PathValue("token"), s.now())
	if err != nil {
		http.Error(w, "This media link is invalid or has expired.", http.StatusForbidden)
		return
	}
	ctx := r.Context()
	l, st, err := s.LessonStateOf(ctx, domainID, userID, lessonID)
	switch {
	case lms.IsNotFound(err):
		http.Error(w, "Not found.", http.StatusNotFound)
		return
	case err != nil:
		s.logger().Error("media: lesson state", "domain", domainID, "lesson", lessonID, "err", err)
		http.Error(w, "Internal server error.", http.StatusInternalServerError)
		return
	case st.State == Locked:
		http.Error(w, "This lesson is locked.", http.StatusForbidden)
		return
	}
	var key, name, ctype string
	switch l.Type {
	case lms.LessonVideo, lms.LessonAudio, lms.LessonFile:
		if l.FileID != 0 {
			f, err := s.Store.File(ctx, domainID, l.FileID)
			if err == nil {
				key, name, ctype = f.BlobKey, f.Name, f.ContentType
			} else if !lms.IsNotFound(err) {
				s.logger().Error("media: file", "domain", domainID, "lesson", lessonID, "err", err)
				http.Error(w, "Internal server error.", http.StatusInternalServerError)
				return
			}
		}
	case lms.LessonLiveClass:
		rec, err := s.recording(ctx, domainID, l)
		if err != nil {
			s.logger().Error("media: recording", "domain", domainID, "lesson", lessonID, "err", err)
			http.Error(w, "Internal server error.", http.StatusInternalServerError)
			return
		}
		key, name, ctype = rec.BlobKey, rec.Name, rec.ContentType
	}
	if key == "" {
		http.Error(w, "This lesson has no media.", http.StatusNotFound)
		return
	}
	f, err := s.Blobs.Open(key)
	if errors.Is(err, blob.ErrNotFound) {
		http.Error(w, "This media has been removed.", http.StatusNotFound)
		return
	}
	if err != nil {
		s.logger().Error("media: open blob", "domain", domainID, "lesson", lessonID, "err", err)
		http.Error(w, "Internal server error.", http.StatusInternalServerError)
		return
	}
	defer f.Close()
	// Only audio and video play in the page; anything else downloads, so
	// an uploaded HTML or SVG file never runs on this origin.
	disposition := "attachment"
	if l.Type != lms.LessonFile && (strings.HasPrefix(ctype, "video/") || strings.HasPrefix(ctype, "audio/")) {
		disposition = "inline"
	}
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": name}))
	w.Header().Set("Content-Security-Policy", "sandbox")
	http.ServeContent(w, r, name, f.ModTime(), f)
}
