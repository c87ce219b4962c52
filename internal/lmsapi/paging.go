package lmsapi

import (
	"net/http"
	"strconv"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/jsonx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Paging of list endpoints: page (1-based, default 1) and limit (default
// DefaultLimit, at most MaxLimit). Answers carry total, page and limit
// beside data.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

type page struct {
	Page  int
	Limit int
}

func readPage(c *call, v *lms.Validator) page {
	return page{
		Page:  int(c.P.Range(v, "page", 1, 1, 1<<31-1)),
		Limit: int(c.P.Range(v, "limit", DefaultLimit, 1, MaxLimit)),
	}
}

func (p page) offset() int { return (p.Page - 1) * p.Limit }

// body is the answer of a paginated list.
func (p page) body(what string, data any, total int64) map[string]any {
	return map[string]any{"message": what + " listed", "data": data, "total": total, "page": p.Page, "limit": p.Limit}
}

// writeJSON writes a 200 with body.
func writeJSON(w http.ResponseWriter, body any) error {
	httpx.WriteJSON(w, http.StatusOK, body)
	return nil
}

// writePage writes the answer writeJSON writes of p.body(what, data,
// total), the same bytes (encoding/json's key order and escaping), where
// data is n items that item appends as JSON: without reflection, which
// was a fifth of users/list's CPU. The hottest lists use it.
func writePage(w http.ResponseWriter, p page, what string, total int64, n int, item func(b []byte, i int) []byte) error {
	bp := httpx.AnswerBuffer()
	defer httpx.FreeAnswerBuffer(bp)
	b := append(*bp, `{"data":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(b, i)
	}
	b = append(b, `],"limit":`...)
	b = strconv.AppendInt(b, int64(p.Limit), 10)
	b = append(b, `,"message":`...)
	b = jsonx.AppendString(b, what+" listed")
	b = append(b, `,"page":`...)
	b = strconv.AppendInt(b, int64(p.Page), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, "}\n"...)
	*bp = b
	httpx.WriteJSONBytes(w, http.StatusOK, b)
	return nil
}

// store is the page as the store takes it.
func (p page) store() store.Page { return store.Page{Offset: p.offset(), Limit: p.Limit} }
