package store

import (
	"context"
	"database/sql"

	"github.com/lectern-lms/lectern/internal/lms"
)

// CreateGroup adds a group.
func (s *Store) CreateGroup(ctx context.Context, domainID int64, g lms.Group) (lms.Group, error) {
	err := s.tx(ctx, func(tx db) error {
		var err error
		g.ID, err = tx.insert(ctx, "INSERT INTO user_groups (domain_id, name, description, created_at) VALUES (?, ?, ?, ?)",
			domainID, g.Name, g.Description, formatTime(s.now()))
		return err
	})
	return g, err
}

// ListGroups returns one page of the domain's groups by id, and the
// number of all.
func (s *Store) ListGroups(ctx context.Context, domainID int64, p Page) ([]lms.Group, int64, error) {
	var out []lms.Group
	total, err := s.list(ctx, "user_groups", "domain_id = ?", []any{domainID}, "id, name, description", p, func(r *sql.Rows) error {
		var g lms.Group
		err := r.Scan(&g.ID, &g.Name, &g.Description)
		out = append(out, g)
		return err
	})
	return out, total, err
}

func groupExists(ctx context.Context, d db, domainID, groupID int64) error {
	ok, err := d.exists(ctx, "SELECT 1 FROM user_groups WHERE domain_id = ? AND id = ?", domainID, groupID)
	if err == nil && !ok {
		err = lms.NotFoundf("group %d not found", groupID)
	}
	return err
}

// AddGroupMember adds a user to a group. added is false when the user was
// already a member.
func (s *Store) AddGroupMember(ctx context.Context, domainID, groupID, userID int64) (u lms.User, added bool, err error) {
	err = s.tx(ctx, func(tx db) error {
		if err := groupExists(ctx, tx, domainID, groupID); err != nil {
			return err
		}
		var err error
		if u, err = user(ctx, tx, domainID, userID); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `INSERT INTO group_members (domain_id, group_id, user_id, user_type, created_at)
			VALUES (?, ?, ?, 'learner', ?) ON CONFLICT DO NOTHING`, domainID, groupID, u.ID, formatTime(s.now()))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		added = n > 0
		return nil
	})
	return u, added, err
}

// GroupMembers returns one page of a group's members, in the order they
// joined, and the number of all.
func (s *Store) GroupMembers(ctx context.Context, domainID, groupID int64, p Page) ([]lms.GroupMember, int64, error) {
	if err := groupExists(ctx, s.read(), domainID, groupID); err != nil {
		return nil, 0, err
	}
	var out []lms.GroupMember
	total, err := s.list(ctx, "group_members m JOIN users u ON u.id = m.user_id",
		"m.domain_id = ? AND m.group_id = ?", []any{domainID, groupID},
		"m.id, u.id, m.user_type, u.name, u.email", p, func(r *sql.Rows) error {
			var m lms.GroupMember
			err := r.Scan(&m.MembershipID, &m.UserID, &m.UserType, &m.Name, &m.Email)
			out = append(out, m)
			return err
		})
	return out, total, err
}
