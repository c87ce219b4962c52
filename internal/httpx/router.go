package httpx

import (
	"net/http"
	"sort"
	"strings"
)

// Router registers handlers by method and ServeMux pattern. Each pattern is
// registered once on the underlying mux, and the method is chosen here, so
// that a known path with a wrong method gets MethodNotAllowed (with an Allow
// header) in the API's own error shape, and so that patterns such as
// "GET /tests/{id}" and "POST /tests/list" never conflict on the mux.
type Router struct {
	Mux *http.ServeMux
	// MethodNotAllowed writes the 405 answer; Allow is already set.
	MethodNotAllowed func(w http.ResponseWriter, r *http.Request, allow []string)
	routes           map[string]map[string]http.Handler
	noted            []string
}

// NewRouter returns a Router on mux.
func NewRouter(mux *http.ServeMux, notAllowed func(w http.ResponseWriter, r *http.Request, allow []string)) *Router {
	return &Router{Mux: mux, MethodNotAllowed: notAllowed, routes: map[string]map[string]http.Handler{}}
}

// Handle routes method + pattern (a ServeMux pattern without a method) to h.
func (rt *Router) Handle(method, pattern string, h http.Handler) {
	methods, ok := rt.routes[pattern]
	if !ok {
		methods = map[string]http.Handler{}
		rt.routes[pattern] = methods
		rt.Mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rt.dispatch(w, r, methods)
		}))
	}
	if _, dup := methods[method]; dup {
		panic("httpx: duplicate route " + method + " " + pattern)
	}
	methods[method] = h
}

func (rt *Router) dispatch(w http.ResponseWriter, r *http.Request, methods map[string]http.Handler) {
	h, ok := methods[r.Method]
	if !ok && r.Method == http.MethodHead {
		h, ok = methods[http.MethodGet]
	}
	if ok {
		h.ServeHTTP(w, r)
		return
	}
	allow := make([]string, 0, len(methods)+1)
	for m := range methods {
		allow = append(allow, m)
		if m == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
	}
	sort.Strings(allow)
	w.Header().Set("Allow", strings.Join(allow, ", "))
	rt.MethodNotAllowed(w, r, allow)
}

// Note records method + pattern for Routes: a route whose handler is on
// Mux directly (one pattern that picks its endpoint from a path value).
func (rt *Router) Note(method, pattern string) {
	rt.noted = append(rt.noted, method+" "+pattern)
}

// Routes lists every registered or noted route as "METHOD pattern",
// sorted.
func (rt *Router) Routes() []string {
	out := append([]string(nil), rt.noted...)
	for pattern, methods := range rt.routes {
		for m := range methods {
			out = append(out, m+" "+pattern)
		}
	}
	sort.Strings(out)
	return out
}
