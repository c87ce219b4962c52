package classroom

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/signing"
	"github.com/lectern-lms/lectern/internal/store"
)

// SessionHeader carries a classroom page's session token on its HTTP
// calls (file uploads).
const SessionHeader = "X-Lectern-Session"

// Converter turns office documents into PDF with LibreOffice.
type Converter struct {
	// Path is the soffice (or libreoffice) program.
	Path string
	// Timeout bounds one conversion.
	Timeout time.Duration
}

// FindConverter returns a Converter when LibreOffice is installed, else
// nil.
func FindConverter() *Converter {
	for _, name := range []string{"soffice", "libreoffice"} {
		if p, err := exec.LookPath(name); err == nil {
			return &Converter{Path: p, Timeout: 2 * time.Minute}
		}
	}
	return nil
}

// officeExts are the documents a presentation may be converted from.
var officeExts = map[string]bool{".pptx": true, ".ppt": true, ".odp": true, ".docx": true, ".doc": true, ".odt": true}

// Convert writes src (named name) as a PDF and returns the PDF's bytes.
func (c *Converter) Convert(ctx context.Context, src io.Reader, name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "lectern-convert-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "document"+strings.ToLower(filepath.Ext(name)))
	f, err := os.Create(in)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	// A profile of its own: a second soffice on the default profile would
	// hand the work to the first one and exit at once.
	cmd := exec.CommandContext(ctx, c.Path, "-env:UserInstallation=file://"+filepath.ToSlash(filepath.Join(dir, "profile")),
		"--headless", "--norestore", "--convert-to", "pdf", "--outdir", dir, in)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("conversion took longer than %s", c.Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("soffice: %v: %s", err, bytes.TrimSpace(out))
	}
	pdf, err := os.ReadFile(strings.TrimSuffix(in, filepath.Ext(in)) + ".pdf")
	if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		return nil, fmt.Errorf("soffice wrote no PDF: %s", bytes.TrimSpace(out))
	}
	return pdf, nil
}

// fileError answers an upload with {"error", "field"} and status.
func fileError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg, "field": "file"})
}

// upload takes a file shared in a live room: multipart fields kind
// ("file" or "presentation", also accepted in the query string) and file.
// The uploader must be in the room with the files permission; the plan
// limits the size, the domain's quota the total.
func (p *Pages) upload(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	l, d, err := p.session(ctx, r.Header.Get(SessionHeader))
	if err != nil {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "Open the class from its link first: the session is missing or has expired.",
			"field": SessionHeader})
		return
	}
	key := room.Key{Domain: l.Domain, Class: l.Class, Sitting: l.Occurrence}
	if !p.rooms().CanShareFiles(key, l.UserID) {
		fileError(w, http.StatusForbidden, "You can share files only while you are in the class, and students only when the teacher allows it.")
		return
	}
	plan := lms.PlanOf(d.Plan)
	r.Body = http.MaxBytesReader(w, r.Body, plan.FileMaxBytes+64<<10)
	mr, err := r.MultipartReader()
	if err != nil {
		fileError(w, http.StatusBadRequest, "Send multipart/form-data with the file in a field named file.")
		return
	}
	kind := r.URL.Query().Get("kind")
	for {
		part, err := mr.NextPart()
		if err != nil {
			fileError(w, http.StatusBadRequest, "The form has no field named file.")
			return
		}
		switch part.FormName() {
		case "kind":
			b, _ := io.ReadAll(io.LimitReader(part, 32))
			kind = string(b)
			continue
		case "file":
		default:
			continue
		}
		if kind == "" {
			kind = "file"
		}
		if kind != "file" && kind != "presentation" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "kind must be file or presentation.", "field": "kind"})
			return
		}
		p.storeUpload(w, r, l, d, plan, kind, part.FileName(), part)
		return
	}
}

func (p *Pages) storeUpload(w http.ResponseWriter, r *http.Request, l signing.Launch, d store.Domain, plan lms.Plan,
	kind, filename string, body io.Reader) {
	ctx := r.Context()
	name := SafeName(filename)
	head := make([]byte, 512)
	n, err := io.ReadFull(body, head)
	head = head[:n]
	if n == 0 {
		fileError(w, http.StatusBadRequest, "The file is empty.")
		return
	}
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		p.tooLarge(w, err, plan)
		return
	}
	ctype := http.DetectContentType(head)
	status := lms.FileReady
	office := false
	if kind == "presentation" {
		switch ext := strings.ToLower(filepath.Ext(name)); {
		case bytes.HasPrefix(head, []byte("%PDF-")):
			ctype = "application/pdf"
		case officeExts[ext] && (bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("\xD0\xCF\x11\xE0"))):
			if p.Converter == nil {
				fileError(w, http.StatusUnsupportedMediaType, "This server cannot convert office documents (LibreOffice is not installed). Save the document as PDF and upload that.")
				return
			}
			office, status = true, lms.FileConverting
			ctype = mime.TypeByExtension(ext)
			if ctype == "" {
				ctype = "application/octet-stream"
			}
		default:
			fileError(w, http.StatusUnsupportedMediaType, "A presentation must be a PDF (or a DOCX, PPTX or ODP document on a server with LibreOffice).")
			return
		}
	}
	limit := plan.FileMaxBytes
	key, size, err := p.Blobs.Put(fmt.Sprintf("room-files/%d", l.Domain), io.MultiReader(bytes.NewReader(head), &capReader{r: body, left: limit - int64(n)}))
	if err != nil {
		p.tooLarge(w, err, plan)
		return
	}
	f, err := p.Store.AddRoomFile(ctx, l.Domain, lms.RoomFile{ClassID: l.Class, OccurrenceSeq: l.Occurrence, UserRef: l.UserID,
		UserName: l.UserName, Name: name, ContentType: ctype, Kind: kind, Size: size, BlobKey: key, Status: status,
		CreatedAt: p.now().UTC().Truncate(time.Second)}, plan.FileQuotaBytes)
	if err != nil {
		p.Blobs.Delete(key)
		var le *lms.Error
		if errors.As(err, &le) && le.Code == lms.CodeConflict { // over the quota
			fileError(w, http.StatusRequestEntityTooLarge, "The school has used its space for shared files: "+le.Message+".")
			return
		}
		p.Logger.Error("store shared file", "err", err)
		fileError(w, http.StatusInternalServerError, "The file could not be saved. Try again in a moment.")
		return
	}
	k := room.Key{Domain: l.Domain, Class: l.Class, Sitting: l.Occurrence}
	p.rooms().FileShared(k, f)
	if office {
		go p.convert(d, k, f)
	}
	c, err := p.Store.LiveClass(ctx, l.Domain, l.Class)
	if err != nil {
		p.Logger.Error("load class for a shared file", "err", err)
	}
	writeJSON(w, http.StatusCreated, room.NewFileInfo(f, p.fileURL(d, f, room.FileLinkExpiry(c, p.now()))))
}

func (p *Pages) tooLarge(w http.ResponseWriter, err error, plan lms.Plan) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, errTooLarge) {
		fileError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("The file is larger than this school's limit of %d MB.", plan.FileMaxBytes>>20))
		return
	}
	p.Logger.Warn("shared file upload", "err", err)
	fileError(w, http.StatusBadRequest, "The upload was interrupted. Try again.")
}

var errTooLarge = errors.New("file too large")

// capReader reads r until left bytes have passed, then fails: the blob
// store then removes what it wrote.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.left -= int64(n)
	if c.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

// convert turns an uploaded office document into the PDF the room shows,
// then announces the file again (ready or failed).
func (p *Pages) convert(d store.Domain, k room.Key, f lms.RoomFile) {
	ctx := context.Background()
	fail := func(err error) {
		p.Logger.Warn("convert presentation", "file", f.ID, "err", err)
		f.Status = lms.FileFailed
		if err := p.Store.UpdateRoomFile(ctx, d.ID, f); err != nil {
			p.Logger.Error("store conversion failure", "file", f.ID, "err", err)
		}
		p.rooms().FileShared(k, f)
	}
	src, err := p.Blobs.Open(f.BlobKey)
	if err != nil {
		fail(err)
		return
	}
	pdf, err := p.Converter.Convert(ctx, src, f.Name)
	src.Close()
	if err != nil {
		fail(err)
		return
	}
	key, size, err := p.Blobs.Put(fmt.Sprintf("room-files/%d", d.ID), bytes.NewReader(pdf))
	if err != nil {
		fail(err)
		return
	}
	old := f.BlobKey
	f.BlobKey, f.Size, f.ContentType, f.Status = key, size, "application/pdf", lms.FileReady
	f.Name = strings.TrimSuffix(f.Name, filepath.Ext(f.Name)) + ".pdf"
	if err := p.Store.UpdateRoomFile(ctx, d.ID, f); err != nil {
		p.Blobs.Delete(key)
		fail(err)
		return
	}
	p.Blobs.Delete(old)
	p.rooms().FileShared(k, f)
}

// download serves a shared file behind its signed, expiring link, always
// as an attachment.
func (p *Pages) download(w http.ResponseWriter, r *http.Request) {
	d, id, ok := p.verifyLink(w, r, "id", signing.VerifyFile)
	if !ok {
		return
	}
	f, err := p.Store.RoomFile(r.Context(), d.ID, id)
	var bf blob.File
	if err == nil && f.Status == lms.FileReady {
		bf, err = p.Blobs.Open(f.BlobKey)
	} else if err == nil {
		err = lms.NotFoundf("file %d is not ready", id)
	}
	if err != nil {
		p.missing(w, err, "File not found", "This file has been removed, or is still being converted.")
		return
	}
	defer bf.Close()
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "sandbox")
	w.Header().Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, f.Name, bf.ModTime(), bf)
}

// fileURL is a shared file's download link (relative: the page's own
// origin).
func (p *Pages) fileURL(d store.Domain, f lms.RoomFile, expires time.Time) string {
	return signing.FileURL("", d.LaunchSecret, d.ID, f.ID, expires)
}

// FileURL signs shared-file links for the room service.
func (p *Pages) FileURL(domain int64, f lms.RoomFile, expires time.Time) string {
	d, err := p.Store.GetDomain(context.Background(), domain)
	if err != nil {
		p.Logger.Error("sign a file link", "err", err)
		return ""
	}
	return p.fileURL(d, f, expires)
}

// SafeName makes an uploaded file's name safe to store and to send back
// in Content-Disposition: its last path element, without control
// characters, at most 120 characters, never empty or a dot name.
func SafeName(name string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError || r == '"' {
			return -1
		}
		return r
	}, name)
	name = strings.TrimLeft(strings.TrimSpace(name), ".")
	if utf8.RuneCountInString(name) > 120 {
		ext := filepath.Ext(name)
		if utf8.RuneCountInString(ext) > 10 {
			ext = ""
		}
		name = string([]rune(name)[:120-utf8.RuneCountInString(ext)]) + ext
	}
	if name == "" {
		name = "file"
	}
	return name
}

// session opens a session token.
func (p *Pages) session(ctx context.Context, token string) (signing.Launch, store.Domain, error) {
	id, err := signing.EncryptedDomain(token)
	if err != nil {
		return signing.Launch{}, store.Domain{}, err
	}
	d, err := p.Store.GetDomain(ctx, id)
	if err != nil {
		return signing.Launch{}, d, err
	}
	l, err := signing.OpenSession(d.LaunchSecret, token, p.now())
	return l, d, err
}
