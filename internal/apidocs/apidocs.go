// Package apidocs serves the OpenAPI documents of both APIs
// (GET /openapi/lms.yaml, GET /openapi/classroom.yaml) and a reference
// page rendered from them on the server (GET /docs): plain HTML and one
// stylesheet, no JavaScript, nothing fetched from elsewhere.
package apidocs

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strings"
	"sync"

	"github.com/lectern-lms/lectern/docs/openapi"
)

//go:embed page.html style.css
var assets embed.FS

// Headers of the reference page: the page is static HTML that loads one
// stylesheet from this server; it runs nothing and submits nothing.
const (
	pageCSP = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	specCSP = "default-src 'none'; sandbox"
)

// Docs serves the documents and the reference page.
type Docs struct {
	once sync.Once
	page *template.Template
	// html holds each API's rendered page, by name ("lms", "classroom"),
	// and the index under "".
	html map[string][]byte
}

// Register adds /openapi/{name}, /docs, /docs/{api} and /docs/style.css to
// mux.
func (d *Docs) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /openapi/{name}", d.serveSpec)
	mux.HandleFunc("GET /docs", d.servePage)
	mux.HandleFunc("GET /docs/{api}", d.servePage)
	mux.HandleFunc("GET /docs/style.css", d.serveStyle)
}

// renderAll renders the pages once, from the embedded documents, on the
// first request (not at start-up: parsing both documents takes a while). A
// document that does not parse is a programming error, which the tests
// catch, and panics.
func (d *Docs) renderAll() {
	d.page = template.Must(template.New("page.html").Funcs(funcs).ParseFS(assets, "page.html"))
	d.html = map[string][]byte{}
	var apis []*API
	for _, name := range openapi.Names {
		b, err := openapi.Files.ReadFile(name)
		if err != nil {
			panic(err)
		}
		api, err := Parse(strings.TrimSuffix(name, ".yaml"), b)
		if err != nil {
			panic("apidocs: " + name + ": " + err.Error())
		}
		apis = append(apis, api)
	}
	d.html[""] = d.render(pageData{APIs: apis})
	for _, api := range apis {
		d.html[api.Name] = d.render(pageData{APIs: apis, API: api})
	}
}

type pageData struct {
	APIs []*API
	API  *API // nil on the index
}

func (d *Docs) render(data pageData) []byte {
	var b bytes.Buffer
	if err := d.page.Execute(&b, data); err != nil {
		panic("apidocs: render: " + err.Error())
	}
	return b.Bytes()
}

// serveSpec answers GET /openapi/lms.yaml and /openapi/classroom.yaml.
func (d *Docs) serveSpec(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := openapi.Files.ReadFile(name)
	if err != nil || !strings.HasSuffix(name, ".yaml") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", "*") // a public document: other tools may read it
	write(w, "application/yaml; charset=utf-8", specCSP, b)
}

// servePage answers GET /docs (the index) and /docs/{api}.
func (d *Docs) servePage(w http.ResponseWriter, r *http.Request) {
	d.once.Do(d.renderAll)
	b, ok := d.html[r.PathValue("api")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Referrer-Policy", "no-referrer")
	write(w, "text/html; charset=utf-8", pageCSP, b)
}

func (d *Docs) serveStyle(w http.ResponseWriter, r *http.Request) {
	b, _ := assets.ReadFile("style.css")
	write(w, "text/css; charset=utf-8", specCSP, b)
}

// write answers 200 with body, its type, and a CSP.
func write(w http.ResponseWriter, ctype, csp string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", csp)
	w.Write(body)
}
