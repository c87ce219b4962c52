package portal

import (
	"html/template"
	"net/http"
)

// pageRoutes registers the learner's pages on the portal's mux, with paths
// relative to the portal's base. This placeholder (a page that says who is
// signed in, with a logout button) stands until the portal pages land; the
// pages replace this file.
func (p *Portal) pageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /", p.requireLearner(http.HandlerFunc(p.placeholder)))
}

var placeholderTmpl = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>My learning</title></head>
<body><main><h1>My learning</h1><p id="who">Signed in as {{.Name}} ({{.Email}})</p><p id="path">{{.Path}}</p>
<form method="post" action="{{.Base}}/logout"><input type="hidden" name="csrf" value="{{.CSRF}}"><button type="submit">Sign out</button></form>
</main></body></html>
`))

func (p *Portal) placeholder(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	placeholderTmpl.Execute(w, map[string]string{"Lang": l.Lang, "Name": l.Name, "Email": l.Email,
		"Path": r.URL.RequestURI(), "Base": p.base(r), "CSRF": l.CSRF})
}
