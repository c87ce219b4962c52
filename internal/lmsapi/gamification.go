package lmsapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Bounds of point values: one ledger row moves at most maxPoints points,
// a rule gives at most maxPoints, a badge needs at most maxPointsRequired.
const (
	maxPoints         = 1_000_000_000
	maxPointsRequired = 1_000_000_000_000
	maxReasonLen      = 500
	maxBadgeDescLen   = 1000
)

// gamificationRoutes registers the points, rules, badges and leaderboard
// endpoints (docs/api/gamification.md).
func (a *API) gamificationRoutes(rt *httpx.Router) {
	a.handle(rt, "GET", "/gamification/rules", a.listPointRules)
	a.handle(rt, "PUT", "/gamification/rules", a.setPointRule)
	a.handle(rt, "POST", "/gamification/points", a.grantPoints)
	a.handle(rt, "POST", "/gamification/badges", a.createBadge)
	a.handle(rt, "GET", "/gamification/badges", a.listBadges)
	a.handle(rt, "GET", "/gamification/badges/{badge_id}", a.getBadge)
	a.handle(rt, "PUT", "/gamification/badges/{badge_id}", a.updateBadge)
	a.handle(rt, "DELETE", "/gamification/badges/{badge_id}", a.deleteBadge)
	a.handle(rt, "POST", "/gamification/user-points", a.userPoints)
	a.handle(rt, "POST", "/gamification/user-badges", a.userBadges)
	a.handle(rt, "GET", "/gamification/leaderboard", a.leaderboard)
	a.handle(rt, "POST", "/gamification/leaderboard", a.leaderboard)
}

// badgeJSON is the seed's Badge; awarded_at is set for earned badges.
type badgeJSON struct {
	ID             int64  `json:"id"`
	Description    string `json:"description"`
	PointsRequired int64  `json:"points_required"`
	AwardedAt      string `json:"awarded_at,omitempty"`
}

func toBadgeJSON(b store.Badge) badgeJSON {
	j := badgeJSON{ID: b.ID, Description: b.Description, PointsRequired: b.PointsRequired}
	if !b.AwardedAt.IsZero() {
		j.AwardedAt = b.AwardedAt.UTC().Format(time.RFC3339)
	}
	return j
}

func toBadgesJSON(bs []store.Badge) []badgeJSON {
	out := make([]badgeJSON, len(bs))
	for i, b := range bs {
		out[i] = toBadgeJSON(b)
	}
	return out
}

// GET /gamification/rules: every event with the points it gives.
func (a *API) listPointRules(w http.ResponseWriter, r *http.Request, c *call) error {
	rules, err := a.Store.PointRules(r.Context(), c.Domain.ID)
	if err != nil {
		return err
	}
	data := make([]map[string]any, len(rules))
	for i, rule := range rules {
		data[i] = map[string]any{"event": rule.Event, "points": rule.Points}
	}
	return ok(w, "Point rules listed", data)
}

// PUT /gamification/rules: event, points (0 to maxPoints).
func (a *API) setPointRule(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	event := c.P.RequiredString(&v, "event")
	if event != "" {
		v.Check(store.ValidPointEvent(event), "event", "must be one of "+strings.Join(store.PointEvents, ", "))
	}
	var points int64
	if c.P.Has("points") {
		points = c.P.Range(&v, "points", 0, 0, maxPoints)
	} else {
		v.Add("points", "is required")
	}
	if err := v.Err(); err != nil {
		return err
	}
	rule, err := a.Store.SetPointRule(r.Context(), c.Domain.ID, event, points)
	if err != nil {
		return err
	}
	return ok(w, "Point rule set", map[string]any{"event": rule.Event, "points": rule.Points})
}

// POST /gamification/points: user_id or email, points (non-zero; negative
// deducts), reason. Badges are evaluated after the change.
func (a *API) grantPoints(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	ref := readUserRef(c, &v)
	points := c.P.RequiredInt(&v, "points")
	if !v.Has("points") {
		v.Check(points != 0, "points", "must be a non-zero integer (negative deducts)")
		v.Check(points >= -maxPoints && points <= maxPoints, "points", "must be between -1000000000 and 1000000000")
	}
	reason := c.P.RequiredString(&v, "reason")
	v.Check(!lms.TooLong(reason, maxReasonLen), "reason", "must be at most 500 characters")
	if err := v.Err(); err != nil {
		return err
	}
	userID, err := a.resolveUser(r.Context(), c.Domain.ID, ref)
	if err != nil {
		return err
	}
	e, res, err := a.Store.AddPoints(r.Context(), c.Domain.ID, store.PointsEntry{UserID: userID, Points: points, Reason: reason})
	if err != nil {
		return err
	}
	msg := "Points granted"
	if points < 0 {
		msg = "Points deducted"
	}
	return ok(w, msg, map[string]any{
		"id": e.ID, "user_id": userID, "points": e.Points, "reason": e.Reason, "added": e.CreatedAt.Unix(),
		"gamification_points": res.Total, "badges_awarded": toBadgesJSON(res.Awarded),
	})
}

// POST /gamification/badges: description, points_required.
func (a *API) createBadge(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	desc := c.P.RequiredString(&v, "description")
	v.Check(!lms.TooLong(desc, maxBadgeDescLen), "description", "must be at most 1000 characters")
	var need int64
	if c.P.Has("points_required") {
		need = c.P.Range(&v, "points_required", 0, 0, maxPointsRequired)
	} else {
		v.Add("points_required", "is required")
	}
	if err := v.Err(); err != nil {
		return err
	}
	b, err := a.Store.CreateBadge(r.Context(), c.Domain.ID, store.Badge{Description: desc, PointsRequired: need})
	if err != nil {
		return err
	}
	return ok(w, "Badge created", toBadgeJSON(b))
}

// GET /gamification/badges: page, limit.
func (a *API) listBadges(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	bs, total, err := a.Store.ListBadges(r.Context(), c.Domain.ID, pg.store())
	if err != nil {
		return err
	}
	return writeJSON(w, pg.body("Badges", toBadgesJSON(bs), total))
}

// GET /gamification/badges/{badge_id}.
func (a *API) getBadge(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "badge_id")
	if err := v.Err(); err != nil {
		return err
	}
	b, err := a.Store.Badge(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Badge found", toBadgeJSON(b))
}

// PUT /gamification/badges/{badge_id}: description and/or points_required.
func (a *API) updateBadge(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "badge_id")
	var u store.BadgeUpdate
	if c.P.Has("description") {
		desc := c.P.Get("description")
		v.Check(!lms.TooLong(desc, maxBadgeDescLen), "description", "must be at most 1000 characters")
		u.Description = &desc
	}
	if c.P.Has("points_required") {
		need := c.P.Range(&v, "points_required", 0, 0, maxPointsRequired)
		u.PointsRequired = &need
	}
	if u.Description == nil && u.PointsRequired == nil {
		v.Add("description", "send description or points_required (or both)")
		v.Add("points_required", "send description or points_required (or both)")
	}
	if err := v.Err(); err != nil {
		return err
	}
	b, err := a.Store.UpdateBadge(r.Context(), c.Domain.ID, id, u)
	if err != nil {
		return err
	}
	return ok(w, "Badge updated", toBadgeJSON(b))
}

// DELETE /gamification/badges/{badge_id}.
func (a *API) deleteBadge(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "badge_id")
	if err := v.Err(); err != nil {
		return err
	}
	if err := a.Store.DeleteBadge(r.Context(), c.Domain.ID, id); err != nil {
		return err
	}
	return ok(w, "Badge "+strconv.FormatInt(id, 10)+" deleted", map[string]any{"id": id})
}

// POST /gamification/user-points: user_id or email. Answers the user's
// total and awards every badge it reaches that they do not have yet.
func (a *API) userPoints(w http.ResponseWriter, r *http.Request, c *call) error {
	userID, err := a.userParam(r.Context(), c)
	if err != nil {
		return err
	}
	res, err := a.Store.EvaluateBadges(r.Context(), c.Domain.ID, userID)
	if err != nil {
		return err
	}
	msg := "User points found; badges evaluated, " + strconv.Itoa(len(res.Awarded)) + " awarded"
	return ok(w, msg, map[string]any{
		"user_id": userID, "gamification_points": res.Total, "badges_awarded": toBadgesJSON(res.Awarded),
	})
}

// POST /gamification/user-badges: user_id or email. Answers the badges
// the user has earned.
func (a *API) userBadges(w http.ResponseWriter, r *http.Request, c *call) error {
	userID, err := a.userParam(r.Context(), c)
	if err != nil {
		return err
	}
	bs, err := a.Store.UserBadges(r.Context(), c.Domain.ID, userID)
	if err != nil {
		return err
	}
	return ok(w, "User badges listed", toBadgesJSON(bs))
}

// leaderboardJSON is the seed's Leaderboard entry plus rank.
type leaderboardJSON struct {
	Rank   int64  `json:"rank"`
	UserID int64  `json:"user_id"`
	Name   string `json:"name"`
	Points int64  `json:"points"`
	Added  int64  `json:"added"`
}

// GET or POST /gamification/leaderboard: period (all, month, week), page,
// limit.
func (a *API) leaderboard(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	period := strings.ToLower(c.P.Get("period"))
	if period == "" {
		period = store.PeriodAll
	}
	since, known := store.PeriodStart(period, a.now())
	v.Check(known, "period", "must be one of "+strings.Join(store.LeaderboardPeriods, ", "))
	if err := v.Err(); err != nil {
		return err
	}
	es, total, err := a.Store.Leaderboard(r.Context(), c.Domain.ID, store.LeaderboardQuery{Since: since}, pg.store())
	if err != nil {
		return err
	}
	data := make([]leaderboardJSON, len(es))
	for i, e := range es {
		data[i] = leaderboardJSON{Rank: e.Rank, UserID: e.UserID, Name: e.Name, Points: e.Points, Added: e.Latest.Unix()}
	}
	body := pg.body("Leaderboard", data, total)
	body["period"] = period
	return writeJSON(w, body)
}
