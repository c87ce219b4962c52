package classroom

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/classroom/webdist"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/signing"
)

// Timeouts of a classroom WebSocket: the hello must come quickly; after
// that a client that sends nothing (it pings every 10 s) for Heartbeat is
// gone, and its attendance session ends.
const (
	HelloTimeout = 10 * time.Second
	Heartbeat    = 30 * time.Second
	writeTimeout = 10 * time.Second
	maxMessage   = 256 << 10
)

var shellPage = template.Must(template.New("shell").Parse(`<!doctype html>
<html lang="en" dir="ltr"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/classroom/assets/{{.App}}.css">
<script type="module" src="/classroom/assets/{{.App}}.js"></script></head>
<body><div id="app"></div><script id="lectern-boot" type="application/json">{{.Boot}}</script></body></html>
`))

// shell writes the page that loads app (classroom or check) with boot as
// its start-up data.
func (p *Pages) shell(w http.ResponseWriter, app, title string, boot any) {
	b, err := json.Marshal(boot)
	if err != nil {
		panic(err)
	}
	// The boot data sits in a script element: keep "</script>" and
	// comment openers out of it.
	b = bytes.ReplaceAll(b, []byte("<"), []byte(`\u003c`))
	if title == "" {
		title = "Lectern classroom"
	} else {
		title += " · Lectern classroom"
	}
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; "+
		"connect-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors *")
	p.page(w, http.StatusOK, shellPage, map[string]any{"App": app, "Title": title, "Boot": template.JS(b)})
}

// asset is one built client file, with its gzipped form.
type asset struct {
	raw, gz []byte
	etag    string
}

// assets serves the built client (go:embed), gzipped when the browser
// accepts it, with a content hash as ETag: the file names are fixed, so
// browsers revalidate and get a 304 until a new build.
func assets() http.Handler {
	var once sync.Once
	files := map[string]asset{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			fs.WalkDir(webdist.FS, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				b, _ := fs.ReadFile(webdist.FS, p)
				sum := sha256.Sum256(b)
				var gz bytes.Buffer
				zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
				zw.Write(b)
				zw.Close()
				files[p] = asset{raw: b, gz: gz.Bytes(), etag: hex.EncodeToString(sum[:8])}
				return nil
			})
		})
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		a, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Vary", "Accept-Encoding")
		body, tag := a.raw, `"`+a.etag+`"`
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			body, tag = a.gz, `"`+a.etag+`-gz"`
			h.Set("Content-Encoding", "gzip")
		}
		if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
			h.Set("Content-Type", ct)
		}
		h.Set("ETag", tag)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
	})
}

// socket is the classroom WebSocket: a hello with a session token, then
// room messages both ways until either side closes.
func (p *Pages) socket(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: p.Origins})
	if err != nil {
		return // Accept has answered
	}
	ws.SetReadLimit(maxMessage)
	ctx := r.Context()
	conn, fail, moved := p.hello(ctx, ws, r)
	if moved != nil {
		p.relay(ctx, r, ws, moved.owner, moved.hello)
		return
	}
	if fail != nil {
		b, _ := json.Marshal(fail)
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		ws.Write(wctx, websocket.MessageText, b)
		cancel()
		ws.Close(websocket.StatusPolicyViolation, fail.Code)
		return
	}

	written := make(chan struct{})
	go func() {
		defer close(written)
		for msg := range conn.Out() {
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			err := ws.Write(wctx, websocket.MessageText, msg)
			cancel()
			if err != nil {
				conn.Leave()
				for range conn.Out() {
				}
				return
			}
		}
		status := websocket.StatusNormalClosure
		if reason := conn.CloseReason(); reason == "restart" {
			status = websocket.StatusGoingAway
		}
		ws.Close(status, conn.CloseReason())
	}()
	for {
		rctx, cancel := context.WithTimeout(ctx, Heartbeat)
		_, data, err := ws.Read(rctx)
		cancel()
		if err != nil {
			break
		}
		conn.Handle(data)
	}
	conn.Leave()
	<-written
	ws.CloseNow()
}

// hello reads the first message, checks its session and joins the room.
func (p *Pages) hello(ctx context.Context, ws *websocket.Conn, req *http.Request) (*room.Conn, *room.Fail, *moved) {
	hctx, cancel := context.WithTimeout(ctx, HelloTimeout)
	defer cancel()
	_, data, err := ws.Read(hctx)
	if err != nil {
		return nil, room.NewFail(room.FailInvalid, "The classroom did not receive a greeting in time. Reload the page."), nil
	}
	var h room.Hello
	if err := json.Unmarshal(data, &h); err != nil || h.Type != "hello" {
		return nil, room.NewFail(room.FailInvalid, "The first message must be a hello."), nil
	}
	if h.Protocol != room.Protocol {
		return nil, room.NewFail(room.FailProtocol, "This page is out of date. Reload it."), nil
	}
	l, d, err := p.session(hctx, h.Session)
	if err != nil {
		if !errors.Is(err, signing.ErrInvalid) && !errors.Is(err, signing.ErrExpired) && !lms.IsNotFound(err) {
			p.Logger.Error("classroom hello", "err", err)
		}
		return nil, room.NewFail(room.FailInvalid, "This classroom link is not valid or has expired. Ask for a new link."), nil
	}
	c, err := p.Store.LiveClass(hctx, l.Domain, l.Class)
	if err != nil {
		if !lms.IsNotFound(err) {
			p.Logger.Error("classroom hello", "err", err)
		}
		return nil, room.NewFail(room.FailEnded, "This class no longer exists."), nil
	}
	if p.Router != nil {
		owner, err := p.Router.Route(hctx, room.Key{Domain: l.Domain, Class: l.Class, Sitting: l.Occurrence}, req)
		if err != nil {
			p.Logger.Error("classroom hello: find the room's node", "err", err)
			return nil, room.NewFail(room.FailInvalid, "The class could not be opened. Try again in a moment."), nil
		}
		if owner != "" {
			return nil, nil, &moved{owner: owner, hello: data}
		}
	}
	conn, err := p.Hub.Join(hctx, room.Entry{Launch: l, Class: c, Plan: lms.PlanOf(d.Plan), Resume: h.Resume})
	var f *room.Fail
	if errors.As(err, &f) {
		return nil, f, nil
	}
	if err != nil {
		return nil, room.NewFail(room.FailInvalid, "The class could not be opened. Try again in a moment."), nil
	}
	return conn, nil, nil
}

// checkPage is the pre-class check: camera, microphone and connectivity,
// direct and relayed.
func (p *Pages) checkPage(w http.ResponseWriter, r *http.Request) {
	p.shell(w, "check", "Check your setup", map[string]any{"ice": "/classroom/check/ice", "offer": "/classroom/check/offer"})
}

// checkICE gives the check page TURN servers with short-lived
// credentials. The TURN server relays only to this server's media port,
// so these credentials are no use for anything else.
func (p *Pages) checkICE(w http.ResponseWriter, r *http.Request) {
	servers := []room.ICEServer{}
	if p.ICE != nil {
		servers = append(servers, p.ICE("check")...)
	}
	writeJSON(w, http.StatusOK, map[string]any{"iceServers": servers})
}

// checkOffer answers the check page's offer with a peer that echoes its
// data channel.
func (p *Pages) checkOffer(w http.ResponseWriter, r *http.Request) {
	if p.Check == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "Media is not enabled on this server."})
		return
	}
	var body struct {
		SDP string `json:"sdp"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&body); err != nil || body.SDP == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "Send a JSON body with sdp: the offer."})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	answer, err := p.Check(ctx, body.SDP)
	if err != nil {
		// The media engine's text may name its internals: log it, answer
		// in general terms.
		p.Logger.Warn("connectivity check", "err", err)
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "The connectivity check could not be started. Try again in a minute."})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"sdp": answer})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
