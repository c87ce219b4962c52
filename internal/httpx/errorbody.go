package httpx

import (
	"net/http"

	"github.com/lectern-lms/lectern/internal/lms"
)

// ErrorBody is the error shape of the management API (/api/v1), which the
// learner portal's JSON endpoints answer too: a message safe to show, a
// code, the bad fields, and the request's id (for the logs).
type ErrorBody struct {
	Message   string           `json:"message"`
	Code      string           `json:"code"`
	Fields    []lms.FieldError `json:"fields,omitempty"`
	RequestID string           `json:"request_id"`
}

// WriteError writes body with status, its RequestID set to the request's.
func WriteError(w http.ResponseWriter, r *http.Request, status int, body ErrorBody) {
	body.RequestID = RequestInfo(r.Context()).RequestID
	WriteJSON(w, status, body)
}

// codeStatus is the HTTP status of each client-facing lms.Code.
var codeStatus = map[lms.Code]int{
	lms.CodeInvalid:      http.StatusBadRequest,
	lms.CodeUnauthorized: http.StatusUnauthorized,
	lms.CodeForbidden:    http.StatusForbidden,
	lms.CodeNotFound:     http.StatusNotFound,
	lms.CodeConflict:     http.StatusConflict,
}

// CodeStatus is the HTTP status of an *lms.Error's code in the ErrorBody
// shape: 400, 401, 403, 404, 409; a code without one of its own (none
// today but lms.CodeInternal, which callers answer as a bare 500) is 400.
func CodeStatus(c lms.Code) int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return http.StatusBadRequest
}
