package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBinaryLeavesOutTestSupport checks that the server binary links no
// package that only tests should: the test-support packages
// (internal/apitest, internal/blob/blobtest, internal/classroom/rtctest)
// import testing, so the binary must not depend on testing at all.
func TestBinaryLeavesOutTestSupport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/lectern-lms/lectern/internal/server") {
		t.Fatalf("go list -deps lists no internal/server: %q", deps)
	}
	if slices.Contains(deps, "testing") {
		t.Error("cmd/lectern depends on package testing: a test-support package is imported by production code (go list -deps . shows which)")
	}
}
