package lmsapi

import "github.com/lectern-lms/lectern/internal/httpx"

// routes lists every endpoint. Paths are relative to Prefix. Where public
// sources disagree on a method, both are registered.
func (a *API) routes(rt *httpx.Router) {
	// Users
	a.handle(rt, "POST", "/users/create", a.createUser)
	a.handle(rt, "DELETE", "/users/delete", a.deleteUser)
	a.handle(rt, "POST", "/users/list", a.listUsers)
	a.handle(rt, "GET", "/users/getuser", a.getUser)
	a.handle(rt, "POST", "/users/getuser", a.getUser)
	a.handle(rt, "GET", "/users/getuserbyEmail/{email}", a.getUserByEmail)

	a.gamificationRoutes(rt)
}
