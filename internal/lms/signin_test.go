package lms

import "testing"

func TestReturnPath(t *testing.T) {
	cases := []struct {
		in, want string
		refused  bool
	}{
		{"", "/", false},
		{"/", "/", false},
		{"/courses/7/lessons/3", "/courses/7/lessons/3", false},
		{"/courses/7?tab=outline#top", "/courses/7?tab=outline#top", false},
		{"/x?next=https://evil.example", "/x?next=https://evil.example", false}, // a query value stays inside the portal
		{"/caf%C3%A9", "/caf%C3%A9", false},
		{"https://evil.example/", "", true},
		{"http:/evil.example", "", true},
		{"javascript:alert(1)", "", true},
		{"//evil.example/x", "", true},
		{"/\\evil.example", "", true},
		{"\\\\evil.example", "", true},
		{"/courses\\..\\x", "", true},
		{"/%2F%2Fevil.example", "", true},
		{"/%5Cevil.example", "", true},
		{"/a/../../api/v1", "", true},
		{"/./x", "", true},
		{"/a b", "", true},
		{"/a\tb", "", true},
		{"/a\nLocation: x", "", true},
		{"courses/7", "", true},
		{"evil.example", "", true},
		{"/" + string(make([]byte, 2048)), "", true},
	}
	for _, c := range cases {
		got, why := ReturnPath(c.in)
		if c.refused {
			if why == "" {
				t.Errorf("ReturnPath(%q) = %q, want refused", c.in, got)
			}
			continue
		}
		if why != "" || got != c.want {
			t.Errorf("ReturnPath(%q) = %q, %q; want %q", c.in, got, why, c.want)
		}
	}
}

func TestPortalHost(t *testing.T) {
	cases := []struct {
		in, want string
		refused  bool
	}{
		{"", "", false},
		{"learn.school.com", "learn.school.com", false},
		{"Learn.School.COM.", "learn.school.com", false},
		{"learn-1.my-school.co.uk", "learn-1.my-school.co.uk", false},
		{"learn.localhost", "learn.localhost", false},
		{"localhost", "", true},
		{"127.0.0.1", "", true},
		{"learn.school.com:8443", "", true},
		{"https://learn.school.com", "", true},
		{"learn.school.com/x", "", true},
		{"-learn.school.com", "", true},
		{"learn..school.com", "", true},
		{"learn_1.school.com", "", true},
		{"lèarn.school.com", "", true},
	}
	for _, c := range cases {
		got, why := PortalHost(c.in)
		if c.refused != (why != "") || got != c.want {
			t.Errorf("PortalHost(%q) = %q, %q; want %q (refused %v)", c.in, got, why, c.want, c.refused)
		}
	}
}
