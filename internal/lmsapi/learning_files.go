package lmsapi

import (
	"bufio"
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
)

// DefaultMaxUpload is the largest lesson file accepted when API.MaxUpload
// is 0: 2 GiB.
const DefaultMaxUpload = 2 << 30

func (a *API) maxUpload() int64 {
	if a.MaxUpload > 0 {
		return a.MaxUpload
	}
	return DefaultMaxUpload
}

// uploadFunc is an upload handler: it reads the body itself (streamed to
// the blob store, never held in memory).
type uploadFunc func(w http.ResponseWriter, r *http.Request, d call) error

// wrapUpload runs the steps of wrap that come before reading the body:
// content negotiation, authentication and the rate limit.
func (a *API) wrapUpload(h uploadFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpx.AcceptsJSON(r) {
			a.writeError(w, r, &apiError{status: http.StatusNotAcceptable, code: "not_acceptable",
				message: "this API answers only application/json; change the Accept header"})
			return
		}
		d, err := a.authenticate(r)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		httpx.RequestInfo(r.Context()).DomainID = d.ID
		dec := a.Limiter.Allow("lms:" + strconv.FormatInt(d.ID, 10))
		dec.SetHeaders(w.Header())
		if !dec.Allowed {
			a.writeError(w, r, &apiError{status: http.StatusTooManyRequests, code: "rate_limited",
				message: "rate limit exceeded; retry after " + w.Header().Get("Retry-After") + " seconds"})
			return
		}
		if err := h(w, r, call{Domain: d}); err != nil {
			a.writeError(w, r, err)
		}
	})
}

// POST /files/upload: multipart/form-data with one file part named file
// (and optionally a name field before it, to override the file name).
// The file goes to the blob store; the answer names it by id for
// lessons' file_id.
func (a *API) uploadFile(w http.ResponseWriter, r *http.Request, c call) error {
	if a.Learn == nil || a.Learn.Blobs == nil {
		return &apiError{status: http.StatusServiceUnavailable, code: "unavailable", message: "file storage is not configured on this server"}
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
			message: "send the file as multipart/form-data with a part named file"}
	}
	limit := a.maxUpload()
	r.Body = http.MaxBytesReader(w, r.Body, limit+1<<20) // room for the multipart framing
	mr, err := r.MultipartReader()
	if err != nil {
		return lms.Invalidf("file", "is missing: the body is not valid multipart form data")
	}
	name := ""
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return lms.Invalidf("file", "is required: send the file as a part named file")
		}
		if err != nil {
			return uploadErr(err, limit)
		}
		switch part.FormName() {
		case "name":
			b, _ := io.ReadAll(io.LimitReader(part, 1024))
			name = strings.TrimSpace(string(b))
			if len(name) > maxName {
				return lms.Invalidf("name", "must be at most %d characters", maxName)
			}
			continue
		case "file":
		default:
			continue
		}
		if name == "" {
			name = path.Base(strings.ReplaceAll(part.FileName(), `\`, "/"))
		}
		if name == "" || name == "." || name == "/" {
			name = "file"
		}
		br := bufio.NewReaderSize(part, 512)
		head, _ := br.Peek(512)
		ctype := contentType(part.Header.Get("Content-Type"), name, head)
		counted := &limitedReader{r: br, left: limit}
		key, size, err := a.Learn.Blobs.Put("learn/"+strconv.FormatInt(c.Domain.ID, 10), counted)
		if err != nil {
			if key != "" {
				a.Learn.Blobs.Delete(key)
			}
			return uploadErr(err, limit)
		}
		if counted.over {
			a.Learn.Blobs.Delete(key)
			return uploadErr(errTooLarge, limit)
		}
		if size == 0 {
			a.Learn.Blobs.Delete(key)
			return lms.Invalidf("file", "is empty")
		}
		f, err := a.Store.CreateFile(r.Context(), c.Domain.ID, lms.LearnFile{BlobKey: key, Name: name, ContentType: ctype, Size: size})
		if err != nil {
			a.Learn.Blobs.Delete(key)
			return err
		}
		return ok(w, "File uploaded", map[string]any{"id": f.ID, "file_id": f.ID, "key": f.BlobKey, "name": f.Name,
			"content_type": f.ContentType, "size": f.Size, "duration_s": probeDuration(r.Context(), a.Learn.Blobs, key, ctype)})
	}
}

var errTooLarge = errors.New("upload too large")

// uploadErr turns a body-reading error into the API's answer.
func uploadErr(err error, limit int64) error {
	var mbe *http.MaxBytesError
	if errors.Is(err, errTooLarge) || errors.As(err, &mbe) {
		return &apiError{status: http.StatusRequestEntityTooLarge, code: "body_too_large",
			message: "file is larger than " + strconv.FormatInt(limit, 10) + " bytes"}
	}
	return lms.Invalidf("file", "could not be read: the upload was cut short or is not valid multipart data")
}

// limitedReader reads at most left bytes and notes when there was more.
type limitedReader struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.over = true
			return 0, errTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// mediaTypes are the types of the usual lesson files by extension, so
// they do not depend on the host's MIME tables (where .webm may be audio).
var mediaTypes = map[string]string{
	".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg", ".mov": "video/quicktime",
	".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".oga": "audio/ogg", ".ogg": "audio/ogg", ".opus": "audio/ogg", ".wav": "audio/wav",
	".pdf": "application/pdf", ".zip": "application/zip", ".txt": "text/plain",
}

// contentType is the part's declared type when specific, else the type of
// the file name's extension, else what the first bytes look like.
func contentType(declared, name string, head []byte) string {
	if mt, _, err := mime.ParseMediaType(declared); err == nil && mt != "application/octet-stream" {
		return mt
	}
	ext := strings.ToLower(path.Ext(name))
	if t, ok := mediaTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		mt, _, _ := mime.ParseMediaType(t)
		return mt
	}
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(head))
	return mt
}
