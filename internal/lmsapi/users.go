package lmsapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/lectern-lms/lectern/internal/jsonx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// userJSON is the seed's User.
type userJSON struct {
	ID        int64  `json:"id"`
	LMSUserID *int64 `json:"lms_user_id,omitempty"`
	Name      string `json:"name"`
	Username  string `json:"username"`
	Email     string `json:"email"`
}

// toUserJSON renders u. lms_user_id is the same number as id: Lectern is
// the LMS, so the two ids are one.
func toUserJSON(u lms.User, withLMSID bool) userJSON {
	j := userJSON{ID: u.ID, Name: u.Name, Username: u.Username, Email: u.Email}
	if withLMSID {
		id := u.ID
		j.LMSUserID = &id
	}
	return j
}

// POST /users/create: username, email, optional name (defaults to username).
func (a *API) createUser(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	username := c.P.RequiredString(&v, "username")
	email := c.P.RequiredString(&v, "email")
	name := c.P.Get("name")
	if name == "" {
		name = username
	}
	v.Check(!lms.TooLong(username, 255), "username", "must be at most 255 characters")
	v.Check(!lms.TooLong(name, 255), "name", "must be at most 255 characters")
	if email != "" {
		v.Check(lms.ValidEmail(email), "email", "must be a valid email address such as ann@example.com")
	}
	if err := v.Err(); err != nil {
		return err
	}
	u, err := a.Store.CreateUser(r.Context(), c.Domain.ID, lms.User{Name: name, Username: username, Email: email})
	if err != nil {
		return err
	}
	return writeCreated(w, "User created", u.ID)
}

// writeCreated writes the bytes writeJSON writes of {"message": message,
// "id": id} (encoding/json's key order, escaping and newline), without
// the map and the reflection: they were about a sixth of the bytes a
// users/create allocated.
func writeCreated(w http.ResponseWriter, message string, id int64) error {
	return writeWithMessage(w, "id", func(b []byte) []byte { return strconv.AppendInt(b, id, 10) }, message)
}

// DELETE /users/delete: email.
func (a *API) deleteUser(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	email := c.P.RequiredString(&v, "email")
	if err := v.Err(); err != nil {
		return err
	}
	u, err := a.Store.DeleteUserByEmail(r.Context(), c.Domain.ID, email)
	if err != nil {
		return err
	}
	return ok(w, "User "+u.Email+" deleted", nil)
}

// POST /users/list: optional name and email (partial, case-insensitive),
// page and limit.
func (a *API) listUsers(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	users, total, err := a.Store.ListUsers(r.Context(), c.Domain.ID, store.UserFilter{
		Name: c.P.Get("name"), Email: c.P.Get("email")}, pg.store())
	if err != nil {
		return err
	}
	defer a.Store.ReleaseUsers(users)
	return writePage(w, pg, "Users", total, len(users), func(b []byte, i int) []byte {
		return appendUserJSON(b, users[i])
	})
}

// appendUserJSON appends what toUserJSON(u, true) marshals to.
func appendUserJSON(b []byte, u lms.User) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, u.ID, 10)
	b = append(b, `,"lms_user_id":`...)
	b = strconv.AppendInt(b, u.ID, 10)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, u.Name)
	b = append(b, `,"username":`...)
	b = jsonx.AppendString(b, u.Username)
	b = append(b, `,"email":`...)
	b = jsonx.AppendString(b, u.Email)
	return append(b, '}')
}

// GET or POST /users/getuser: userId.
func (a *API) getUser(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "userId")
	if err := v.Err(); err != nil {
		return err
	}
	u, err := a.Store.User(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return okWith(w, "User found", func(b []byte) []byte { return append(appendUserJSON(append(b, '['), u), ']') })
}

// GET /users/getuserbyEmail/{email}: the email is URL-escaped in the path.
func (a *API) getUserByEmail(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	email := c.P.RequiredString(&v, "email")
	if err := v.Err(); err != nil {
		return err
	}
	u, err := a.Store.UserByEmail(r.Context(), c.Domain.ID, email)
	if err != nil {
		return err
	}
	return ok(w, "User found", []userJSON{toUserJSON(u, false)})
}

// userRef is how a request names a user: user_id (alias userId) or email.
type userRef struct {
	idField string
	id      int64
	email   string
}

// readUserRef reads user_id (or userId) and email; when neither is sent it
// names both in v.
func readUserRef(c *call, v *lms.Validator) userRef {
	ref := userRef{idField: "user_id", email: c.P.Get("email")}
	if !c.P.Has("user_id") && c.P.Has("userId") {
		ref.idField = "userId"
	}
	switch {
	case c.P.Has(ref.idField):
		ref.id = c.P.ID(v, ref.idField)
	case ref.email == "":
		v.Add("user_id", "is required unless email is sent")
		v.Add("email", "is required unless user_id is sent")
	}
	return ref
}

// resolveUser returns the id of the domain's user ref names: 404 when there
// is none, 400 when user_id and email name two different users.
func (a *API) resolveUser(ctx context.Context, domainID int64, ref userRef) (int64, error) {
	if ref.email == "" {
		u, err := a.Store.User(ctx, domainID, ref.id)
		return u.ID, err
	}
	u, err := a.Store.UserByEmail(ctx, domainID, ref.email)
	if err != nil {
		return 0, err
	}
	if ref.id != 0 && ref.id != u.ID {
		var v lms.Validator
		v.Add(ref.idField, "names a different user than email")
		v.Add("email", "names a different user than "+ref.idField)
		return 0, v.Err()
	}
	return u.ID, nil
}

// userParam reads and resolves the user a request names by user_id (or
// userId) or email.
func (a *API) userParam(ctx context.Context, c *call) (int64, error) {
	var v lms.Validator
	ref := readUserRef(c, &v)
	if err := v.Err(); err != nil {
		return 0, err
	}
	return a.resolveUser(ctx, c.Domain.ID, ref)
}
