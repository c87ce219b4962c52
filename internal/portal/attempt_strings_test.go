package portal

import (
	"regexp"
	"testing"
)

// TestAttemptStringsComplete: every key the attempt pages use is in the
// English catalogue.
func TestAttemptStringsComplete(t *testing.T) {
	re := regexp.MustCompile(`(?:\bt|\btf) \$?\.Lang "([a-z_]+)"|attemptText\([a-zA-Z.]+, "([a-z_]+)"\)`)
	src := startTmpl.Tree.Root.String() + attemptTmpl.Tree.Root.String()
	found := re.FindAllStringSubmatch(src, -1)
	if len(found) < 20 {
		t.Fatalf("the scan found %d keys: the pattern no longer matches the templates", len(found))
	}
	for _, m := range found {
		key := m[1] + m[2]
		if _, ok := attemptStrings["en"][key]; !ok {
			t.Errorf("string %q is not in the English catalogue", key)
		}
	}
}
