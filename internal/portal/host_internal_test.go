package portal

import (
	"net"
	"net/http/httptest"
	"testing"
)

func TestHostName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"learn.school.test", "learn.school.test"},
		{"learn.school.test:8080", "learn.school.test"},
		{"Learn.School.Test.:443", "Learn.School.Test."},
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1:18131", "127.0.0.1"},
		{"[::1]:8080", "::1"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[::1", "[::1"},
		{"", ""},
		{":80", ""},
	} {
		if got := hostName(c.in); got != c.want {
			t.Errorf("hostName(%q) = %q, want %q", c.in, got, c.want)
		}
		// Where net.SplitHostPort splits a host and a port, the same host.
		if h, _, err := net.SplitHostPort(c.in); err == nil && h != hostName(c.in) {
			t.Errorf("hostName(%q) = %q, net.SplitHostPort's host %q", c.in, hostName(c.in), h)
		}
	}
}

func TestIPLiteral(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "10.1.2.3", "::1", "fe80::1", "2001:db8::8a2e:370:7334", "::ffff:192.0.2.1",
		"learn.school.test", "localhost", "1.2.3", "1.2.3.4.5", "123.com", "a:b", "1e100.net", "0x7f.0.0.1", ""} {
		if got, want := ipLiteral(host), net.ParseIP(host) != nil; got != want {
			t.Errorf("ipLiteral(%q) = %v, net.ParseIP says %v", host, got, want)
		}
	}
}

func TestBaseHost(t *testing.T) {
	url := "https://Lectern.Example.test:8443/base"
	p := &Portal{BaseURL: func() string { return url }}
	if got := p.baseHost(); got != "Lectern.Example.test" {
		t.Fatalf("baseHost = %q", got)
	}
	url = "http://other.example.test"
	if got := p.baseHost(); got != "other.example.test" {
		t.Fatalf("baseHost after the URL changed = %q", got)
	}
	url = "://no scheme"
	if got := p.baseHost(); got != "" {
		t.Fatalf("baseHost of a URL that does not parse = %q", got)
	}
}

// BenchmarkForeignHost is the check every request answered on a host name
// goes through: here the public URL's own host, as behind a proxy.
func BenchmarkForeignHost(b *testing.B) {
	p := &Portal{BaseURL: func() string { return "https://lectern.example.test" }}
	r := httptest.NewRequest("POST", "https://lectern.example.test/v2/getclass", nil)
	b.ReportAllocs()
	for b.Loop() {
		if p.foreignHost(r) != "" {
			b.Fatal("the public host is foreign")
		}
	}
}
