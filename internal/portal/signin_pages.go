package portal

import (
	"html/template"
	"net/http"
)

// The sign-in flow's own pages (link used, signed out, sign in, open in a
// new tab): one small self-contained template, so they work before and
// without the portal's page templates.
var messageTmpl = template.Must(template.New("message").Parse(`<!doctype html>
<html lang="{{.Lang}}">
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
a.button{display:inline-block;min-height:44px;box-sizing:border-box;padding:.6rem 1.2rem;border-radius:8px;background:#1f5fbf;color:#fff;text-decoration:none;font-weight:600}
a.button:focus-visible{outline:3px solid #f5b400;outline-offset:2px}
@media (max-width:480px){main{margin:0;border-radius:0;min-height:100vh;box-sizing:border-box}}
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p>{{.Body}}</p>
{{if .Link}}<p><a class="button" href="{{.Link}}"{{if .NewTab}} target="_blank" rel="noopener noreferrer"{{end}}>{{.LinkText}}</a></p>{{end}}
</main>
</body>
</html>
`))

type messageData struct {
	Lang, Title, Body string
	Link, LinkText    string
	NewTab            bool
}

func (p *Portal) render(w http.ResponseWriter, status int, data messageData) {
	if data.Lang == "" {
		data.Lang = "en"
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	messageTmpl.Execute(w, data)
}

// message shows a page with a title, a sentence and an optional link.
func (p *Portal) message(w http.ResponseWriter, r *http.Request, status int, title, body, link string) {
	p.render(w, status, messageData{Title: title, Body: body, Link: link, LinkText: "Continue"})
}

// linkUnusable is the one page for a login link that is used, expired,
// unknown or of another domain (HTTP 410): it tells nothing apart.
func (p *Portal) linkUnusable(w http.ResponseWriter, r *http.Request) {
	p.render(w, http.StatusGone, messageData{Title: "This sign-in link was used or has expired",
		Body: "Sign-in links work once and only for a few minutes. Go back to your school's website and open your course again."})
}

// signInPage is what a portal page shows without a session (HTTP 401). In
// an iframe of another site the session cookie cannot reach the portal,
// so it offers the same page in a new tab instead of sending the browser
// anywhere.
func (p *Portal) signInPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Header.Get("Sec-Fetch-Dest") == "iframe" {
		p.render(w, http.StatusUnauthorized, messageData{Title: "Open your course in a new tab",
			Body:   "Your browser does not keep you signed in inside this page. Sign in from your school's website, then open the course in a new tab.",
			Link:   p.base(r) + r.URL.RequestURI(),
			NewTab: true, LinkText: "Open in a new tab"})
		return
	}
	p.render(w, http.StatusUnauthorized, messageData{Title: "Sign in to continue",
		Body: "Open your course from your school's website to sign in."})
}

// newTabPage offers a sign-in link in a new tab, for a sign-in attempted
// inside an iframe of another site (where the cookie would be lost).
func (p *Portal) newTabPage(w http.ResponseWriter, r *http.Request, link string) {
	p.render(w, http.StatusOK, messageData{Title: "Continue in a new tab",
		Body:   "Your browser does not keep you signed in inside this page. Continue in a new tab to open your course.",
		Link:   link,
		NewTab: true, LinkText: "Open in a new tab"})
}
