package lmsapi

import (
	"net/http"

	"github.com/lectern-lms/lectern/internal/lms"
)

func groupJSON(g lms.Group) map[string]any {
	return map[string]any{"id": g.ID, "group_id": g.ID, "group_name": g.Name}
}

// POST /groups/create: groupName (as in the seed's example) or name (as in
// its parameter table), description.
func (a *API) createGroup(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	name, param := c.P.First("groupName", "name")
	if param == "" {
		v.Add("groupName", "is required (or send it as name)")
	}
	checkLen(&v, "groupName", name, maxName)
	checkLen(&v, "description", c.P.Get("description"), maxText)
	if err := v.Err(); err != nil {
		return err
	}
	g, err := a.Store.CreateGroup(r.Context(), c.Domain.ID, lms.Group{Name: name, Description: c.P.Get("description")})
	if err != nil {
		return err
	}
	return ok(w, "Group created", groupJSON(g))
}

// POST /groups/addUser: groupId and the user as user_id or email (when
// both are sent they must name the same user). Adding a member again
// changes nothing and says so.
func (a *API) addGroupUser(w http.ResponseWriter, r *http.Request, c *call) error {
	groupID, err := idParam(c, "groupId")
	if err != nil {
		return err
	}
	userID, err := a.userParam(r.Context(), c)
	if err != nil {
		return err
	}
	u, added, err := a.Store.AddGroupMember(r.Context(), c.Domain.ID, groupID, userID)
	if err != nil {
		return err
	}
	msg := u.Email + " added to the group"
	if !added {
		msg = u.Email + " is already in the group; nothing changed"
	}
	return ok(w, msg, map[string]any{"group_id": groupID, "user_id": u.ID, "already_member": !added})
}

// POST /groups/list: page, limit.
func (a *API) listGroups(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	groups, total, err := a.Store.ListGroups(r.Context(), c.Domain.ID, pg.store())
	if err != nil {
		return err
	}
	data := make([]map[string]any, len(groups))
	for i, g := range groups {
		data[i] = groupJSON(g)
	}
	return writeJSON(w, pg.body("Groups", data, total))
}

// POST /groups/listallusers: groupId, page, limit. Members carry the
// seed's fields: id (the user's id), user_type, name, email, thumb (no
// avatars are stored: always ""), aid (the membership's id).
func (a *API) listGroupUsers(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	groupID := c.P.ID(&v, "groupId")
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	members, total, err := a.Store.GroupMembers(r.Context(), c.Domain.ID, groupID, pg.store())
	if err != nil {
		return err
	}
	type member struct {
		ID       int64  `json:"id"`
		UserType string `json:"user_type"`
		Name     string `json:"name"`
		Email    string `json:"email"`
		Thumb    string `json:"thumb"`
		AID      int64  `json:"aid"`
	}
	data := make([]member, len(members))
	for i, m := range members {
		data[i] = member{m.UserID, m.UserType, m.Name, m.Email, "", m.MembershipID}
	}
	return writeJSON(w, pg.body("Group members", data, total))
}
