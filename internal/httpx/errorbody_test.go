package httpx

import (
	"net/http"
	"testing"

	"github.com/lectern-lms/lectern/internal/lms"
)

func TestCodeStatus(t *testing.T) {
	for _, tc := range []struct {
		code lms.Code
		want int
	}{
		{lms.CodeInvalid, http.StatusBadRequest},
		{lms.CodeUnauthorized, http.StatusUnauthorized},
		{lms.CodeForbidden, http.StatusForbidden},
		{lms.CodeNotFound, http.StatusNotFound},
		{lms.CodeConflict, http.StatusConflict},
		{"some_new_code", http.StatusBadRequest},
	} {
		if got := CodeStatus(tc.code); got != tc.want {
			t.Errorf("CodeStatus(%q) = %d, want %d", tc.code, got, tc.want)
		}
	}
}
