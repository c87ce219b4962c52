package portal

import (
	"bytes"
	"embed"
	"html"
	"html/template"
	"io/fs"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/internal/classroom/i18n"
)

// The portal's pages are html/template files (templates/*.html): layout.html
// holds the frame and shared blocks, every other file one page's "content".
// They work without JavaScript; learn.js (web/classroom/src/learn) adds the
// lesson player's progress reports and local dates.

//go:embed templates/*.html
var templateFS embed.FS

var pageTemplates = sync.OnceValue(func() map[string]*template.Template {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		out[name] = template.Must(template.New(name).ParseFS(templateFS, "templates/layout.html", n))
	}
	return out
})

// catalogues holds every language's strings, read once.
var pageCatalogues = sync.OnceValue(func() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, tag := range i18n.Tags() {
		out[tag], _ = i18n.Catalogue(tag)
	}
	return out
})

// pageData is what every template gets: the frame's data, a translator and the
// page's own Body.
type pageData struct {
	Lang, Dir string
	Title     string
	Site      string // the school's name (the domain's)
	Base      string // the portal's base path
	Page      string // page name, for tests and styles
	Nav       string // the navigation entry that is current
	Learner   *Learner
	CSRF      string
	Body      any
	cat       map[string]string
}

var placeholderRE = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

func (d *pageData) text(key string) string {
	if s, ok := d.cat[key]; ok {
		return s
	}
	if s, ok := pageCatalogues()["en"][key]; ok {
		return s
	}
	return key
}

// T is the string for key in the page's language as HTML, its {name}
// placeholders filled from args (name, value pairs). Values are escaped
// unless they are template.HTML (a <time> element, say).
func (d *pageData) T(key string, args ...any) template.HTML {
	s := d.text(key)
	var b strings.Builder
	last := 0
	for _, m := range placeholderRE.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(template.HTMLEscapeString(s[last:m[0]]))
		name := s[m[2]:m[3]]
		v, ok := tArg(args, name)
		switch {
		case !ok:
			b.WriteString(template.HTMLEscapeString(s[m[0]:m[1]]))
		case tIsHTML(v):
			b.WriteString(string(v.(template.HTML)))
		default:
			b.WriteString(template.HTMLEscapeString(tPlain(v)))
		}
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(s[last:]))
	return template.HTML(b.String())
}

// S is T as plain text, for attributes.
func (d *pageData) S(key string, args ...any) string {
	s := d.text(key)
	return placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := tArg(args, m[1:len(m)-1]); ok {
			return tPlain(v)
		}
		return m
	})
}

func tArg(args []any, name string) (any, bool) {
	for i := 0; i+1 < len(args); i += 2 {
		if k, _ := args[i].(string); k == name {
			return args[i+1], true
		}
	}
	return nil, false
}

func tIsHTML(v any) bool {
	_, ok := v.(template.HTML)
	return ok
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

func tPlain(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case template.HTML:
		return html.UnescapeString(tagRE.ReplaceAllString(string(v), ""))
	}
	return ""
}

// timeHTML is t as a <time> element: UTC text the server writes, which
// learn.js rewrites in the reader's time zone and language.
func timeHTML(t time.Time, withClock bool) template.HTML {
	t = t.UTC()
	format, text := "date", t.Format("2006-01-02")
	if withClock {
		format, text = "datetime", t.Format("2006-01-02 15:04")+" UTC"
	}
	return template.HTML(`<time datetime="` + t.Format(time.RFC3339) + `" data-format="` + format + `">` + text + `</time>`)
}

// mediaClock formats seconds as m:ss or h:mm:ss.
func mediaClock(seconds int) string {
	if seconds < 0 {
		seconds = 0
	}
	h, m, s := seconds/3600, seconds%3600/60, seconds%60
	if h > 0 {
		return strconv.Itoa(h) + ":" + twoDigits(m) + ":" + twoDigits(s)
	}
	return strconv.Itoa(m) + ":" + twoDigits(s)
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// newPage starts a page for the request: language and direction from the
// learner (or the browser), the portal's base, the school's name.
func (p *Portal) newPage(r *http.Request, name, nav string) *pageData {
	tag := lang(r)
	d := &pageData{Lang: tag, Dir: "ltr", Site: p.domain(r).Name, Base: p.base(r), Page: name, Nav: nav}
	if l, ok := LearnerFrom(r.Context()); ok {
		d.Learner, d.CSRF = &l, l.CSRF
		if l.Lang != "" {
			d.Lang = l.Lang
		}
	}
	if i18n.RTL(d.Lang) {
		d.Dir = "rtl"
	}
	d.cat = pageCatalogues()[d.Lang]
	if d.Site == "" {
		d.Site = d.S("learn.portal")
	}
	return d
}

// pageHeaders are the security headers of every portal page: a CSP without
// inline scripts or styles (learn.js and learn.css come from
// /classroom/assets), images also from https (a lesson's Markdown may show
// the school's own), embeds only from the two video players' own hosts,
// and frame-ancestors * because a school may show its portal inside its
// own pages (the session cookie is SameSite=Lax, so a cross-site frame gets
// the sign-in page's "open in a new tab" instead, never a session).
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; "+
		"media-src 'self'; connect-src 'self'; frame-src https://www.youtube-nocookie.com https://player.vimeo.com; "+
		"form-action 'self'; base-uri 'none'; frame-ancestors *")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-store")
	// Lesson pages hold signed media links. Under no-referrer browsers send
	// "Origin: null" with the portal's own form posts; checkCSRF lets the
	// token decide then.
	h.Set("Referrer-Policy", "no-referrer")
}

// renderPage writes page d with template name and status.
func (p *Portal) renderPage(w http.ResponseWriter, r *http.Request, status int, name string, d *pageData) {
	t, ok := pageTemplates()[name]
	if !ok {
		panic("portal: no template " + name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", d); err != nil {
		p.logger().Error("portal render", "template", name, "err", err)
		http.Error(w, "internal server error", http.StatusInternalServerError)
		return
	}
	pageHeaders(w)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// messageBody is the body of message.html.
type messageBody struct {
	Title          template.HTML
	Lines          []template.HTML
	Link, LinkText string
}

// showMessage renders a message page: a title and lines (catalogue keys).
func (p *Portal) showMessage(w http.ResponseWriter, r *http.Request, status int, titleKey string, lineKeys ...string) {
	d := p.newPage(r, "message", "")
	b := messageBody{Title: d.T(titleKey)}
	for _, k := range lineKeys {
		b.Lines = append(b.Lines, d.T(k))
	}
	d.Title, d.Body = d.S(titleKey), b
	p.renderPage(w, r, status, "message", d)
}
