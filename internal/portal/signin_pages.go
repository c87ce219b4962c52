package portal

import (
	"html/template"
	"net/http"
)

// The sign-in flow's own pages (link used, signed out, refused, open in a
// new tab): one small self-contained template (no navigation: nobody is
// signed in), with the portal's strings ("learn.signin.*" in the
// classroom catalogues) in the browser's language.
var messageTmpl = template.Must(template.New("message").Parse(`<!doctype html>
<html lang="{{.Lang}}" dir="{{.Dir}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}</title>
<style>
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2433;background:#f4f6fa}
main{max-width:32rem;margin:12vh auto 0;padding:2rem 1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 .75rem}
p{margin:0 0 1rem}
.detail{color:#5a6477;font-size:.875rem}
a.button{display:inline-block;min-height:44px;box-sizing:border-box;padding:.6rem 1.2rem;border-radius:8px;background:#1f5fbf;color:#fff;text-decoration:none;font-weight:600}
a.button:focus-visible{outline:3px solid #f5b400;outline-offset:2px}
@media (max-width:480px){main{margin:0;border-radius:0;min-height:100vh;box-sizing:border-box}}
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p>{{.Body}}</p>
{{if .Detail}}<p class="detail">{{.Detail}}</p>{{end}}
{{if .Link}}<p><a class="button" href="{{.Link}}"{{if .NewTab}} target="_blank" rel="noopener noreferrer"{{end}}>{{.LinkText}}</a></p>{{end}}
</main>
</body>
</html>
`))

type messageData struct {
	Lang, Dir, Title, Body string
	// Detail is a technical line for the school's developers (a field's
	// rule, an error code); it is not translated.
	Detail         string
	Link, LinkText string
	NewTab         bool
}

// texts returns the page's language, direction and a lookup of the
// catalogue's strings for r.
func (p *Portal) texts(r *http.Request) (lang, dir string, s func(key string) string) {
	d := p.newPage(r, "signin", "")
	return d.Lang, d.Dir, func(key string) string { return d.S(key) }
}

func (p *Portal) render(w http.ResponseWriter, status int, data messageData) {
	if data.Lang == "" {
		data.Lang, data.Dir = "en", "ltr"
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	messageTmpl.Execute(w, data)
}

// message shows a page with a title, a sentence and a technical detail
// (catalogue keys, then plain text).
func (p *Portal) message(w http.ResponseWriter, r *http.Request, status int, titleKey, bodyKey, detail string) {
	lang, dir, t := p.texts(r)
	p.render(w, status, messageData{Lang: lang, Dir: dir, Title: t(titleKey), Body: t(bodyKey), Detail: detail})
}

// linkUnusable is the one page for a login link that is used, expired,
// unknown or of another domain (HTTP 410): it tells nothing apart.
func (p *Portal) linkUnusable(w http.ResponseWriter, r *http.Request) {
	p.message(w, r, http.StatusGone, "learn.signin.usedTitle", "learn.signin.usedText", "")
}

// signInPage is what a portal page shows without a session (HTTP 401). In
// an iframe the session cookie may not reach the portal (a cross-site
// frame), so it offers the same page in a new tab instead of sending the
// browser anywhere.
func (p *Portal) signInPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Header.Get("Sec-Fetch-Dest") == "iframe" {
		lang, dir, t := p.texts(r)
		p.render(w, http.StatusUnauthorized, messageData{Lang: lang, Dir: dir, Title: t("learn.signin.frameTitle"),
			Body: t("learn.signin.frameText"), Link: p.base(r) + r.URL.RequestURI(), NewTab: true, LinkText: t("learn.signin.newTab")})
		return
	}
	p.showMessage(w, r, http.StatusUnauthorized, "learn.signin.title", "learn.signin.text", "learn.signin.again")
}

// newTabPage offers a sign-in link in a new tab, for a sign-in attempted
// inside an iframe of another site (where the cookie would be lost).
func (p *Portal) newTabPage(w http.ResponseWriter, r *http.Request, link string) {
	lang, dir, t := p.texts(r)
	p.render(w, http.StatusOK, messageData{Lang: lang, Dir: dir, Title: t("learn.signin.newTabTitle"),
		Body: t("learn.signin.newTabText"), Link: link, NewTab: true, LinkText: t("learn.signin.newTab")})
}
