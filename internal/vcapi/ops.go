package vcapi

import (
	"errors"

	"github.com/lectern-lms/lectern/internal/lms"
)

// operationTable lists every operation. Names are matched in any letter
// case; they are written here as clients spell them.
func (a *API) operationTable() []operation {
	return []operation{
		// Account
		{name: "getservers", fn: a.getServers, errElem: "errors"},
	}
}

// isUnauthorized reports whether err is the store's bad-key error.
func isUnauthorized(err error) bool {
	var le *lms.Error
	return errors.As(err, &le) && le.Code == lms.CodeUnauthorized
}
