package apidocs_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/docs/openapi"
	"github.com/lectern-lms/lectern/internal/apidocs"
)

func get(t *testing.T, srv *httptest.Server, path string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func server(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	new(apidocs.Docs).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestServesSpecs checks each document is served as embedded, as YAML,
// and that other names are 404.
func TestServesSpecs(t *testing.T) {
	srv := server(t)
	for _, name := range openapi.Names {
		want, _ := openapi.Files.ReadFile(name)
		resp, body := get(t, srv, "/openapi/"+name)
		if resp.StatusCode != 200 || body != string(want) {
			t.Errorf("/openapi/%s: %d, %d bytes; want 200 and the %d embedded bytes", name, resp.StatusCode, len(body), len(want))
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/yaml; charset=utf-8" {
			t.Errorf("/openapi/%s: Content-Type %q", name, ct)
		}
	}
	for _, path := range []string{"/openapi/nope.yaml", "/openapi/openapi.go", "/docs/nope"} {
		if resp, _ := get(t, srv, path); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", path, resp.StatusCode)
		}
	}
}

// TestReferencePage checks the rendered pages: every operation of each
// document appears, nothing is loaded from elsewhere, no script runs, and
// the CSP says so.
func TestReferencePage(t *testing.T) {
	srv := server(t)
	index, body := get(t, srv, "/docs")
	if index.StatusCode != 200 || !strings.Contains(body, `href="/docs/lms"`) || !strings.Contains(body, `href="/openapi/classroom.yaml"`) {
		t.Fatalf("/docs: %d %s", index.StatusCode, body)
	}
	for _, name := range openapi.Names {
		api := strings.TrimSuffix(name, ".yaml")
		doc, _ := openapi.Files.ReadFile(name)
		parsed, err := apidocs.Parse(api, doc)
		if err != nil {
			t.Fatal(err)
		}
		resp, page := get(t, srv, "/docs/"+api)
		if resp.StatusCode != 200 {
			t.Fatalf("/docs/%s: %d", api, resp.StatusCode)
		}
		n := 0
		for _, tag := range parsed.Tags {
			for _, op := range tag.Ops {
				n++
				if !strings.Contains(page, `<code>`+op.Path+`</code>`) {
					t.Errorf("/docs/%s does not show %s %s", api, op.Method, op.Path)
				}
			}
		}
		if n < 25 {
			t.Errorf("/docs/%s: only %d operations parsed", api, n)
		}
		for _, bad := range []string{"<script", "http://", "https://", "//cdn"} {
			if strings.Contains(page, bad) {
				t.Errorf("/docs/%s holds %q", api, bad)
			}
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
			t.Errorf("/docs/%s: CSP %q", api, csp)
		}
	}
	if resp, css := get(t, srv, "/docs/style.css"); resp.StatusCode != 200 || !strings.Contains(css, "body") {
		t.Errorf("/docs/style.css: %d", resp.StatusCode)
	}
}
