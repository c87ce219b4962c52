package store

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Question is one question of the bank at one version. Data is the JSON of
// its type-specific part (quiz.Data); the store does not read it.
type Question struct {
	ID          int64
	VersionID   int64
	Version     int
	Category    string
	Tags        []string
	Type        string
	Text        string
	PointsMilli int64
	Data        string
	Deleted     bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// QuestionFilter selects questions in ListQuestions; empty fields match
// all.
type QuestionFilter struct {
	Category, Tag, Type string
}

func questionNotFound(id int64) error { return lms.NotFoundf("question %d not found", id) }

const questionCols = `q.id, v.id, v.version, q.category, v.type, v.text_md, v.points_milli, v.data, q.deleted, q.created_at, q.updated_at`

func scanQuestion(row interface{ Scan(...any) error }) (Question, error) {
	var q Question
	var deleted int
	err := row.Scan(&q.ID, &q.VersionID, &q.Version, &q.Category, &q.Type, &q.Text, &q.PointsMilli, &q.Data, &deleted,
		timeCol(&q.CreatedAt), timeCol(&q.UpdatedAt))
	q.Deleted = deleted == 1
	return q, err
}

// CreateQuestion adds a question at version 1.
func (s *Store) CreateQuestion(ctx context.Context, domainID int64, q Question) (Question, error) {
	err := s.tx(ctx, func(tx db) error {
		var err error
		q, err = createQuestion(ctx, tx, domainID, q)
		return err
	})
	return q, err
}

// CreateQuestions adds several questions in one transaction (an import).
func (s *Store) CreateQuestions(ctx context.Context, domainID int64, qs []Question) ([]Question, error) {
	out := make([]Question, 0, len(qs))
	err := s.tx(ctx, func(tx db) error {
		for _, q := range qs {
			q, err := createQuestion(ctx, tx, domainID, q)
			if err != nil {
				return err
			}
			out = append(out, q)
		}
		return nil
	})
	return out, err
}

func createQuestion(ctx context.Context, tx db, domainID int64, q Question) (Question, error) {
	at := tx.now()
	id, err := tx.insert(ctx, `INSERT INTO quiz_questions (domain_id, category, created_at, updated_at) VALUES (?, ?, ?, ?)`,
		domainID, q.Category, formatTime(at), formatTime(at))
	if err != nil {
		return q, err
	}
	q.ID, q.CreatedAt, q.UpdatedAt, q.Version = id, at, at, 0
	if err := addVersion(ctx, tx, domainID, &q); err != nil {
		return q, err
	}
	return q, setTags(ctx, tx, domainID, id, q.Tags)
}

func addVersion(ctx context.Context, tx db, domainID int64, q *Question) error {
	q.Version++
	vid, err := tx.insert(ctx, `INSERT INTO quiz_question_versions (domain_id, question_id, version, type, text_md, points_milli, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, domainID, q.ID, q.Version, q.Type, q.Text, q.PointsMilli, q.Data, formatTime(q.UpdatedAt))
	if err != nil {
		return err
	}
	q.VersionID = vid
	_, err = tx.exec(ctx, `UPDATE quiz_questions SET version_id = ?, version = ?, category = ?, updated_at = ? WHERE domain_id = ? AND id = ?`,
		vid, q.Version, q.Category, formatTime(q.UpdatedAt), domainID, q.ID)
	return err
}

func setTags(ctx context.Context, tx db, domainID, id int64, tags []string) error {
	if _, err := tx.exec(ctx, "DELETE FROM quiz_question_tags WHERE domain_id = ? AND question_id = ?", domainID, id); err != nil {
		return err
	}
	for _, t := range tags {
		if _, err := tx.exec(ctx, "INSERT INTO quiz_question_tags (domain_id, question_id, tag) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
			domainID, id, t); err != nil {
			return err
		}
	}
	return nil
}

func tagsOf(ctx context.Context, d db, domainID int64, ids []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{domainID}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := d.query(ctx, "SELECT question_id, tag FROM quiz_question_tags WHERE domain_id = ? AND question_id IN ("+
		placeholders(len(ids))+") ORDER BY tag", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var tag string
		if err := rows.Scan(&id, &tag); err != nil {
			return nil, err
		}
		out[id] = append(out[id], tag)
	}
	return out, rows.Err()
}

// Question returns a question at its current version; a deleted one is
// not found.
func (s *Store) Question(ctx context.Context, domainID, id int64) (Question, error) {
	return question(ctx, s.read(), domainID, id)
}

func question(ctx context.Context, d db, domainID, id int64) (Question, error) {
	q, err := scanQuestion(d.queryRow(ctx, "SELECT "+questionCols+` FROM quiz_questions q
		JOIN quiz_question_versions v ON v.id = q.version_id WHERE q.domain_id = ? AND q.id = ? AND q.deleted = 0`, domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return q, questionNotFound(id)
	}
	if err != nil {
		return q, err
	}
	tags, err := tagsOf(ctx, d, domainID, []int64{id})
	q.Tags = tags[id]
	return q, err
}

// UpdateQuestion applies edit to the current version and stores the result
// as a new version; attempts keep the versions they were given.
func (s *Store) UpdateQuestion(ctx context.Context, domainID, id int64, edit func(*Question) error) (Question, error) {
	var q Question
	err := s.tx(ctx, func(tx db) error {
		var err error
		if q, err = question(ctx, tx, domainID, id); err != nil {
			return err
		}
		if err := edit(&q); err != nil {
			return err
		}
		q.UpdatedAt = s.now()
		if err := addVersion(ctx, tx, domainID, &q); err != nil {
			return err
		}
		return setTags(ctx, tx, domainID, id, q.Tags)
	})
	return q, err
}

// DeleteQuestion marks a question deleted and removes the test slots that
// name it. Its versions stay for the attempts that used them.
func (s *Store) DeleteQuestion(ctx context.Context, domainID, id int64) error {
	return s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "UPDATE quiz_questions SET deleted = 1, updated_at = ? WHERE domain_id = ? AND id = ? AND deleted = 0",
			formatTime(s.now()), domainID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return questionNotFound(id)
		}
		_, err = tx.exec(ctx, "DELETE FROM quiz_slots WHERE domain_id = ? AND question_id = ?", domainID, id)
		return err
	})
}

func questionWhere(domainID int64, f QuestionFilter) (string, []any) {
	where := "q.domain_id = ? AND q.deleted = 0"
	args := []any{domainID}
	if f.Category != "" {
		where += " AND q.category = ?"
		args = append(args, f.Category)
	}
	if f.Type != "" {
		where += " AND v.type = ?"
		args = append(args, f.Type)
	}
	if f.Tag != "" {
		where += " AND EXISTS (SELECT 1 FROM quiz_question_tags t WHERE t.question_id = q.id AND t.tag = ?)"
		args = append(args, f.Tag)
	}
	return where, args
}

// ListQuestions returns a page of the bank's current questions, oldest
// first, and the total matching f.
func (s *Store) ListQuestions(ctx context.Context, domainID int64, f QuestionFilter, p Page) ([]Question, int64, error) {
	d := s.read()
	where, args := questionWhere(domainID, f)
	from := " FROM quiz_questions q JOIN quiz_question_versions v ON v.id = q.version_id WHERE " + where
	total, err := d.count(ctx, "SELECT COUNT(*)"+from, args...)
	if err != nil {
		return nil, 0, err
	}
	q := "SELECT " + questionCols + from + " ORDER BY q.id"
	if p.Limit > 0 {
		q += " LIMIT +? OFFSET +?"
		args = append(args, p.Limit, p.Offset)
	}
	qs, err := s.questions(ctx, d, domainID, q, args...)
	return qs, total, err
}

func (s *Store) questions(ctx context.Context, d db, domainID int64, q string, args ...any) ([]Question, error) {
	rows, err := d.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Question
	var ids []int64
	for rows.Next() {
		q, err := scanQuestion(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
		ids = append(ids, q.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	tags, err := tagsOf(ctx, d, domainID, ids)
	for i := range out {
		out[i].Tags = tags[out[i].ID]
	}
	return out, err
}

// QuestionPool returns the current questions of a category or a tag (for
// random slots).
func (s *Store) QuestionPool(ctx context.Context, domainID int64, category, tag string) ([]Question, error) {
	where, args := questionWhere(domainID, QuestionFilter{Category: category, Tag: tag})
	return s.questions(ctx, s.read(), domainID, "SELECT "+questionCols+
		" FROM quiz_questions q JOIN quiz_question_versions v ON v.id = q.version_id WHERE "+where+" ORDER BY q.id", args...)
}

// QuestionVersions returns the given versions (deleted questions
// included), by version id.
func (s *Store) QuestionVersions(ctx context.Context, domainID int64, versionIDs []int64) (map[int64]Question, error) {
	out := map[int64]Question{}
	if len(versionIDs) == 0 {
		return out, nil
	}
	args := []any{domainID}
	for _, id := range versionIDs {
		args = append(args, id)
	}
	rows, err := s.read().query(ctx, `SELECT q.id, v.id, v.version, q.category, v.type, v.text_md, v.points_milli, v.data, q.deleted,
		q.created_at, v.created_at FROM quiz_question_versions v JOIN quiz_questions q ON q.id = v.question_id
		WHERE v.domain_id = ? AND v.id IN (`+placeholders(len(versionIDs))+")", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		q, err := scanQuestion(rows)
		if err != nil {
			return nil, err
		}
		out[q.VersionID] = q
	}
	return out, rows.Err()
}

// Slot is one slot of a test: a fixed question (QuestionID) or DrawCount
// questions drawn from Category or Tag.
type Slot struct {
	ID          int64
	TestID      int64
	Position    int
	QuestionID  int64
	Category    string
	Tag         string
	DrawCount   int
	PointsMilli int64
}

// AddSlot adds a slot to a test at position (0 or past the end = last;
// later slots move down). A fixed question must exist in the domain.
func (s *Store) AddSlot(ctx context.Context, domainID int64, sl Slot) (Slot, error) {
	err := s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindTest, sl.TestID); err != nil {
			return err
		}
		if sl.QuestionID != 0 {
			if _, err := question(ctx, tx, domainID, sl.QuestionID); err != nil {
				return err
			}
		}
		n, err := tx.count(ctx, "SELECT COUNT(*) FROM quiz_slots WHERE domain_id = ? AND test_id = ?", domainID, sl.TestID)
		if err != nil {
			return err
		}
		if sl.Position <= 0 || int64(sl.Position) > n {
			sl.Position = int(n) + 1
		} else if _, err := tx.exec(ctx, "UPDATE quiz_slots SET position = position + 1 WHERE domain_id = ? AND test_id = ? AND position >= ?",
			domainID, sl.TestID, sl.Position); err != nil {
			return err
		}
		sl.ID, err = tx.insert(ctx, `INSERT INTO quiz_slots (domain_id, test_id, position, question_id, category, tag, draw_count, points_milli, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, domainID, sl.TestID, sl.Position, sl.QuestionID, sl.Category, sl.Tag, sl.DrawCount,
			sl.PointsMilli, formatTime(s.now()))
		return err
	})
	return sl, err
}

// RemoveSlot removes a slot of a test; later slots move up.
func (s *Store) RemoveSlot(ctx context.Context, domainID, testID, slotID int64) error {
	return s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindTest, testID); err != nil {
			return err
		}
		var pos int
		err := tx.queryRow(ctx, "SELECT position FROM quiz_slots WHERE domain_id = ? AND test_id = ? AND id = ?", domainID, testID, slotID).Scan(&pos)
		if errors.Is(err, sql.ErrNoRows) {
			return lms.NotFoundf("slot %d not found in test %d", slotID, testID)
		}
		if err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "DELETE FROM quiz_slots WHERE id = ?", slotID); err != nil {
			return err
		}
		_, err = tx.exec(ctx, "UPDATE quiz_slots SET position = position - 1 WHERE domain_id = ? AND test_id = ? AND position > ?",
			domainID, testID, pos)
		return err
	})
}

// Slots returns a test's slots in order.
func (s *Store) Slots(ctx context.Context, domainID, testID int64) ([]Slot, error) {
	d := s.read()
	if err := mustExist(ctx, d, domainID, lms.KindTest, testID); err != nil {
		return nil, err
	}
	rows, err := d.query(ctx, `SELECT id, test_id, position, question_id, category, tag, draw_count, points_milli FROM quiz_slots
		WHERE domain_id = ? AND test_id = ? ORDER BY position`, domainID, testID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Slot
	for rows.Next() {
		var sl Slot
		if err := rows.Scan(&sl.ID, &sl.TestID, &sl.Position, &sl.QuestionID, &sl.Category, &sl.Tag, &sl.DrawCount, &sl.PointsMilli); err != nil {
			return nil, err
		}
		out = append(out, sl)
	}
	return out, rows.Err()
}

// TestSettings returns a test and the JSON of its engine settings ("" when
// never set).
func (s *Store) TestSettings(ctx context.Context, domainID, testID int64) (lms.Test, string, error) {
	d := s.read()
	t, err := test(ctx, d, domainID, testID)
	if err != nil {
		return t, "", err
	}
	var js string
	err = d.queryRow(ctx, "SELECT settings FROM quiz_settings WHERE domain_id = ? AND test_id = ?", domainID, testID).Scan(&js)
	if errors.Is(err, sql.ErrNoRows) {
		return t, "", nil
	}
	return t, js, err
}

// SetTestSettings stores the JSON of a test's settings. edit gets the
// current JSON ("" when never set) and returns the new one.
func (s *Store) SetTestSettings(ctx context.Context, domainID, testID int64, edit func(current string) (string, error)) (string, error) {
	var js string
	err := s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindTest, testID); err != nil {
			return err
		}
		var cur string
		err := tx.queryRow(ctx, "SELECT settings FROM quiz_settings WHERE domain_id = ? AND test_id = ?", domainID, testID).Scan(&cur)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if js, err = edit(cur); err != nil {
			return err
		}
		_, err = tx.exec(ctx, `INSERT INTO quiz_settings (domain_id, test_id, settings, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (test_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
			domainID, testID, js, formatTime(s.now()))
		return err
	})
	return js, err
}

// QuizOverride is one learner's accommodation on a test.
type QuizOverride struct {
	TestID             int64
	UserID             int64
	Email              string
	ExtraTimeS         int
	MultiplierPermille int
	ExtraAttempts      int
	CloseAt            time.Time // zero = the test's own
	SchemeID           int64
	UpdatedAt          time.Time
}

// SetQuizOverride sets (replaces) the override of the user with email on
// a test. A scheme id must name a pricing scheme of that test.
func (s *Store) SetQuizOverride(ctx context.Context, domainID int64, o QuizOverride) (QuizOverride, error) {
	err := s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindTest, o.TestID); err != nil {
			return err
		}
		u, err := s.userByEmail(ctx, tx, domainID, o.Email)
		if err != nil {
			return err
		}
		o.UserID, o.Email = u.ID, u.Email
		if o.SchemeID != 0 {
			if _, err := ownScheme(ctx, tx, domainID, lms.KindTest, o.TestID, o.SchemeID); err != nil {
				return err
			}
		}
		o.UpdatedAt = s.now()
		closeAt := ""
		if !o.CloseAt.IsZero() {
			closeAt = formatTime(o.CloseAt)
		}
		_, err = tx.exec(ctx, `INSERT INTO quiz_overrides (domain_id, test_id, user_id, extra_time_s, multiplier_permille, extra_attempts,
			close_at, scheme_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (test_id, user_id) DO UPDATE SET extra_time_s = excluded.extra_time_s,
			multiplier_permille = excluded.multiplier_permille, extra_attempts = excluded.extra_attempts,
			close_at = excluded.close_at, scheme_id = excluded.scheme_id, updated_at = excluded.updated_at`,
			domainID, o.TestID, o.UserID, o.ExtraTimeS, o.MultiplierPermille, o.ExtraAttempts, closeAt, o.SchemeID, formatTime(o.UpdatedAt))
		return err
	})
	return o, err
}

const overrideCols = `o.test_id, o.user_id, u.email, o.extra_time_s, o.multiplier_permille, o.extra_attempts, o.close_at, o.scheme_id, o.updated_at`

func scanOverride(row interface{ Scan(...any) error }) (QuizOverride, error) {
	var o QuizOverride
	err := row.Scan(&o.TestID, &o.UserID, &o.Email, &o.ExtraTimeS, &o.MultiplierPermille, &o.ExtraAttempts, optTimeCol(&o.CloseAt),
		&o.SchemeID, timeCol(&o.UpdatedAt))
	return o, err
}

// QuizOverrides lists a test's overrides by email.
func (s *Store) QuizOverrides(ctx context.Context, domainID, testID int64) ([]QuizOverride, error) {
	d := s.read()
	if err := mustExist(ctx, d, domainID, lms.KindTest, testID); err != nil {
		return nil, err
	}
	rows, err := d.query(ctx, "SELECT "+overrideCols+` FROM quiz_overrides o JOIN users u ON u.id = o.user_id
		WHERE o.domain_id = ? AND o.test_id = ?`, domainID, testID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []QuizOverride
	for rows.Next() {
		o, err := scanOverride(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Email) < strings.ToLower(out[j].Email) })
	return out, rows.Err()
}

// QuizOverrideFor returns the user's override on a test (found false when
// there is none).
func (s *Store) QuizOverrideFor(ctx context.Context, domainID, testID, userID int64) (QuizOverride, bool, error) {
	o, err := scanOverride(s.read().queryRow(ctx, "SELECT "+overrideCols+` FROM quiz_overrides o JOIN users u ON u.id = o.user_id
		WHERE o.domain_id = ? AND o.test_id = ? AND o.user_id = ?`, domainID, testID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return QuizOverride{}, false, nil
	}
	return o, err == nil, err
}
