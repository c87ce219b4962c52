package lmsapi_test

import (
	"strconv"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// api is a request to path under /api/v1 with a JSON body, for e.Domain.
func api(method, path string, body any) Request {
	return Request{Method: method, Path: "/api/v1" + path, Body: body}
}

// other is api as the second domain.
func other(e *Env, method, path string, body any) Request {
	r := api(method, path, body)
	r.Domain = &e.Other
	return r
}

// create calls path, requires a 200 and returns the integer at idPath.
func create(t *testing.T, e *Env, path string, body any, idPath string) int64 {
	t.Helper()
	r := e.LMS("POST", path, body)
	if r.Status != 200 {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	return Int(t, r.JSON(t), idPath)
}

// user creates a user with that email in e.Domain and returns its id.
func user(t *testing.T, e *Env, email string) int64 {
	t.Helper()
	return create(t, e, "/users/create", map[string]any{"username": email, "email": email}, "id")
}
