// Package classroom serves what browsers open: the live classroom behind
// launch URLs (plain signed or encrypted), its WebSocket, the pre-class
// check page, and recording downloads behind signed, expiring links.
package classroom

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/signing"
	"github.com/lectern-lms/lectern/internal/store"
)

// Pages serves the browser-facing routes.
type Pages struct {
	Store  *store.Store
	Blobs  blob.Store
	Logger *slog.Logger
	Now    func() time.Time
	// Hub holds the live rooms.
	Hub *room.Hub
	// Router and RoomControl place rooms on the nodes of a cluster (see
	// relay.go); nil on a single node.
	Router      Router
	RoomControl Rooms
	// Check answers the check page's connectivity test; nil disables it.
	Check func(ctx context.Context, offerSDP string) (string, error)
	// ICE returns ICE servers (TURN with fresh credentials) for id; nil
	// means none.
	ICE func(id string) []room.ICEServer
	// Converter turns office documents into PDF presentations; nil when
	// LibreOffice is not installed.
	Converter *Converter
	// Origins are extra host patterns a WebSocket may come from (the
	// public URL's host); the request's own host is always allowed.
	Origins []string
}

func (p *Pages) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Register adds the routes to mux.
func (p *Pages) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /classroom/{class_id}", p.signedLaunch)
	mux.HandleFunc("GET /classroom/e/{token}", p.encryptedLaunch)
	mux.HandleFunc("GET /classroom/ws", p.socket)
	mux.HandleFunc("GET /classroom/check", p.checkPage)
	mux.HandleFunc("POST /classroom/check/ice", p.checkICE)
	mux.HandleFunc("POST /classroom/check/offer", p.checkOffer)
	mux.HandleFunc("POST /classroom/files", p.upload)
	mux.HandleFunc("GET /classroom/files/{id}", p.download)
	mux.Handle("GET /classroom/assets/", http.StripPrefix("/classroom/", assets()))
	mux.HandleFunc("GET /recordings/{id}", p.recording)
	mux.HandleFunc("GET /recordings/{id}/play", p.playback)
	mux.HandleFunc("GET /recordings/{id}/files/{file}", p.recordingFile)
}

func (p *Pages) signedLaunch(w http.ResponseWriter, r *http.Request) {
	l, sig, err := signing.ParseSignedLaunch(r.PathValue("class_id"), r.URL.Query())
	if err == nil {
		var d store.Domain
		if d, err = p.Store.GetDomain(r.Context(), l.Domain); err == nil {
			err = signing.VerifySignedLaunch(d.LaunchSecret, l, sig, p.now())
		}
	}
	p.show(w, r, l, err)
}

func (p *Pages) encryptedLaunch(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	var l signing.Launch
	id, err := signing.EncryptedDomain(token)
	if err == nil {
		var d store.Domain
		if d, err = p.Store.GetDomain(r.Context(), id); err == nil {
			l, err = signing.DecryptLaunch(d.LaunchSecret, token, p.now())
		}
	}
	p.show(w, r, l, err)
}

// show renders the classroom for a verified launch, or the error page.
// The page carries a session token for its WebSocket, bound to the
// launch's domain, class, sitting, user and role.
func (p *Pages) show(w http.ResponseWriter, r *http.Request, l signing.Launch, err error) {
	if err != nil {
		p.linkError(w, r, err)
		return
	}
	d, err := p.Store.GetDomain(r.Context(), l.Domain)
	var c lms.LiveClass
	if err == nil {
		c, err = p.Store.LiveClass(r.Context(), l.Domain, l.Class)
	}
	if err != nil {
		if lms.IsNotFound(err) {
			p.page(w, http.StatusNotFound, errorPage, map[string]string{"Title": "Class not found",
				"Message": "This class no longer exists. Ask your teacher for a new link."})
			return
		}
		p.Logger.Error("classroom page", "err", err)
		p.page(w, http.StatusInternalServerError, errorPage, map[string]string{"Title": "Something went wrong",
			"Message": "The class could not be loaded. Try again in a moment."})
		return
	}
	boot := map[string]any{"session": signing.SessionToken(d.LaunchSecret, l), "ws": "/classroom/ws",
		"check": "/classroom/check", "protocol": room.Protocol, "title": c.Title, "userName": l.UserName, "role": l.Role()}
	p.shell(w, "classroom", c.Title, boot)
}

func (p *Pages) linkError(w http.ResponseWriter, r *http.Request, err error) {
	msg := map[string]string{"Title": "This link is not valid",
		"Message": "The classroom link is incomplete or has been changed. Ask for a new link."}
	if errors.Is(err, signing.ErrExpired) {
		msg = map[string]string{"Title": "This link has expired",
			"Message": "Classroom links work only until the class ends. Ask for a new link."}
	} else if !errors.Is(err, signing.ErrInvalid) && !lms.IsNotFound(err) {
		p.Logger.Error("classroom link", "err", err)
	}
	p.page(w, http.StatusForbidden, errorPage, msg)
}

// verifyLink checks a signed download link: the id in the path value
// idParam, the domain, expiry and signature in the query, checked by
// verify. On failure it has answered.
func (p *Pages) verifyLink(w http.ResponseWriter, r *http.Request, idParam string,
	verify func(secret []byte, domain, id, expires int64, sig string, now time.Time) error) (store.Domain, int64, bool) {
	q := r.URL.Query()
	id, err1 := strconv.ParseInt(r.PathValue(idParam), 10, 64)
	domain, err2 := strconv.ParseInt(q.Get("d"), 10, 64)
	expires, err3 := strconv.ParseInt(q.Get("expires"), 10, 64)
	var err error = signing.ErrInvalid
	var d store.Domain
	if err1 == nil && err2 == nil && err3 == nil {
		if d, err = p.Store.GetDomain(r.Context(), domain); err == nil {
			err = verify(d.LaunchSecret, domain, id, expires, q.Get("sig"), p.now())
		}
	}
	if err != nil {
		p.linkError(w, r, err)
		return d, 0, false
	}
	return d, id, true
}

func (p *Pages) page(w http.ResponseWriter, status int, t *template.Template, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := t.Execute(w, data); err != nil {
		p.Logger.Error("render page", "err", err)
	}
}

// recording serves a recording's file behind a signed, expiring link,
// with Range support (http.ServeContent).
func (p *Pages) recording(w http.ResponseWriter, r *http.Request) {
	_, rec, ok := p.verifiedRecording(w, r)
	if !ok {
		return
	}
	f, err := p.Blobs.Open(rec.BlobKey)
	if err != nil {
		p.missing(w, err, "Recording not found", "This recording has been removed.")
		return
	}
	defer f.Close()
	q := r.URL.Query()
	w.Header().Set("Content-Type", rec.ContentType)
	disposition := "inline"
	if q.Get("download") == "1" {
		disposition = "attachment"
	}
	w.Header().Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": rec.Name}))
	w.Header().Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, rec.Name, f.ModTime(), f)
}

var errorPage = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} · Lectern classroom</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}</style></head>
<body><main><h1 id="error">{{.Title}}</h1><p>{{.Message}}</p></main></body></html>
`))
