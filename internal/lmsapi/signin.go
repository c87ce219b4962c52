package lmsapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
)

// signinRoutes are the learner sign-in endpoints: login links and logout.
func (a *API) signinRoutes(rt *httpx.Router) {
	a.handle(rt, "POST", "/users/loginLink", a.loginLink)
	a.handle(rt, "POST", "/users/logout", a.logoutUser)
}

// boolParam reads true/false/1/0 (def when absent).
func boolParam(c *call, v *lms.Validator, name string, def bool) bool {
	switch c.P.Get(name) {
	case "":
		return def
	case "true", "1":
		return true
	case "false", "0":
		return false
	}
	v.Add(name, "must be true or false")
	return def
}

// POST /users/loginLink: email or user_id, optional return_to (a path in
// the portal), ttl (seconds, 30-600, default 120), create_if_missing and
// name. Answers {"data": {"url", "expires_at", "user_id"}}; the url works
// once, until expires_at.
func (a *API) loginLink(w http.ResponseWriter, r *http.Request, c *call) error {
	if a.Portal == nil {
		return &apiError{status: http.StatusServiceUnavailable, code: "unavailable", message: "the learner portal is not running on this server"}
	}
	var v lms.Validator
	ref := readUserRef(c, &v)
	returnTo, why := lms.ReturnPath(c.P.Get("return_to"))
	if why != "" {
		v.Add("return_to", why)
	}
	ttl := c.P.Range(&v, "ttl", int64(lms.DefaultLinkTTL/time.Second), int64(lms.MinLinkTTL/time.Second), int64(lms.MaxLinkTTL/time.Second))
	create := boolParam(c, &v, "create_if_missing", false)
	name := c.P.Get("name")
	v.Check(!lms.TooLong(name, 255), "name", "must be at most 255 characters")
	if create {
		v.Check(ref.email != "", "email", "is required with create_if_missing")
	}
	if ref.email != "" {
		v.Check(lms.ValidEmail(ref.email), "email", "must be a valid email address such as ann@example.com")
	}
	if err := v.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	userID, err := a.resolveUser(ctx, c.Domain.ID, ref)
	created := false
	if lms.IsNotFound(err) && create && ref.id == 0 {
		if name == "" {
			name = ref.email
		}
		u, cerr := a.Store.CreateUser(ctx, c.Domain.ID, lms.User{Name: name, Username: ref.email, Email: ref.email})
		if lms.ErrorCode(cerr) == lms.CodeConflict {
			u, cerr = a.Store.UserByEmail(ctx, c.Domain.ID, ref.email) // created meanwhile
		} else if cerr == nil {
			created = true
		}
		userID, err = u.ID, cerr
	}
	if err != nil {
		return err
	}
	url, expires, err := a.Portal.IssueLoginLink(ctx, c.Domain.ID, userID, returnTo, time.Duration(ttl)*time.Second)
	if err != nil {
		return err
	}
	return ok(w, "Login link created", map[string]any{"url": url, "expires_at": expires.UTC().Format(time.RFC3339),
		"user_id": userID, "user_created": created})
}

// POST /users/logout: email or user_id. Ends every portal session of the
// learner.
func (a *API) logoutUser(w http.ResponseWriter, r *http.Request, c *call) error {
	if a.Portal == nil {
		return &apiError{status: http.StatusServiceUnavailable, code: "unavailable", message: "the learner portal is not running on this server"}
	}
	userID, err := a.userParam(r.Context(), c)
	if err != nil {
		return err
	}
	n, err := a.Portal.EndSessions(r.Context(), c.Domain.ID, userID)
	if err != nil {
		return err
	}
	return ok(w, "Sessions ended: "+strconv.FormatInt(n, 10), map[string]any{"user_id": userID, "sessions_ended": n})
}
