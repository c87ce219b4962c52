package lmsapi

import (
	"net/http"

	"github.com/lectern-lms/lectern/internal/httpx"
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

// store is the page as the store takes it.
func (p page) store() store.Page { return store.Page{Offset: p.offset(), Limit: p.Limit} }
