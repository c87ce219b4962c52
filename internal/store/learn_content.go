package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Course content: settings, sections, lessons, unlock conditions,
// overrides and uploaded files. Positions are 1-based and kept contiguous
// within a course (sections) or a section (lessons).

// CourseSettings returns a course's learning rules (the defaults when
// never set). An unknown course is not found.
func (s *Store) CourseSettings(ctx context.Context, domainID, courseID int64) (lms.CourseSettings, error) {
	return courseSettings(ctx, s.read(), domainID, courseID)
}

func courseSettings(ctx context.Context, d db, domainID, courseID int64) (lms.CourseSettings, error) {
	if err := mustExist(ctx, d, domainID, lms.KindCourse, courseID); err != nil {
		return lms.CourseSettings{}, err
	}
	cs := lms.DefaultCourseSettings(courseID)
	err := d.queryRow(ctx, `SELECT navigation, timezone, attendance_percent FROM course_settings
		WHERE domain_id = ? AND course_id = ?`, domainID, courseID).Scan(&cs.Navigation, &cs.Timezone, &cs.AttendancePercent)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return cs, err
}

// UpdateCourseSettings applies edit to a course's settings and saves them.
func (s *Store) UpdateCourseSettings(ctx context.Context, domainID, courseID int64, edit func(*lms.CourseSettings)) (lms.CourseSettings, error) {
	var cs lms.CourseSettings
	err := s.tx(ctx, func(tx db) error {
		var err error
		if cs, err = courseSettings(ctx, tx, domainID, courseID); err != nil {
			return err
		}
		edit(&cs)
		_, err = tx.exec(ctx, `INSERT INTO course_settings (domain_id, course_id, navigation, timezone, attendance_percent, updated_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (course_id) DO UPDATE SET navigation = excluded.navigation,
			timezone = excluded.timezone, attendance_percent = excluded.attendance_percent, updated_at = excluded.updated_at`,
			domainID, courseID, cs.Navigation, cs.Timezone, cs.AttendancePercent, formatTime(s.now()))
		return err
	})
	return cs, err
}

// Sections

const sectionCols = "id, course_id, title, position, created_at, updated_at"

func scanSection(row interface{ Scan(...any) error }) (lms.Section, error) {
	var sc lms.Section
	err := row.Scan(&sc.ID, &sc.CourseID, &sc.Title, &sc.Position, timeCol(&sc.CreatedAt), timeCol(&sc.UpdatedAt))
	return sc, err
}

// lockCourse serialises changes of positions within one course (its
// sections and their lessons) on PostgreSQL; SQLite's single writer
// already does. It is a not-found error when the course is missing.
func lockCourse(ctx context.Context, tx db, domainID, id int64) error {
	if !tx.pg {
		return nil
	}
	found, err := tx.exists(ctx, "SELECT 1 FROM courses WHERE domain_id = ? AND id = ? FOR NO KEY UPDATE", domainID, id)
	if err == nil && !found {
		err = itemNotFound(lms.KindCourse, id)
	}
	return err
}

// clampPosition returns pos within [1, n+1] (n+1, the end, when pos is 0).
func clampPosition(pos int, n int64) int {
	if pos <= 0 || int64(pos) > n+1 {
		return int(n + 1)
	}
	return pos
}

// CreateSection adds a section to a course at sc.Position (the end when 0
// or past it).
func (s *Store) CreateSection(ctx context.Context, domainID int64, sc lms.Section) (lms.Section, error) {
	sc.CreatedAt, sc.UpdatedAt = s.now(), s.now()
	err := s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindCourse, sc.CourseID); err != nil {
			return err
		}
		if err := lockCourse(ctx, tx, domainID, sc.CourseID); err != nil {
			return err
		}
		n, err := tx.count(ctx, "SELECT COUNT(*) FROM course_sections WHERE domain_id = ? AND course_id = ?", domainID, sc.CourseID)
		if err != nil {
			return err
		}
		sc.Position = clampPosition(sc.Position, n)
		if _, err := tx.exec(ctx, "UPDATE course_sections SET position = position + 1 WHERE domain_id = ? AND course_id = ? AND position >= ?",
			domainID, sc.CourseID, sc.Position); err != nil {
			return err
		}
		sc.ID, err = tx.insert(ctx, `INSERT INTO course_sections (domain_id, course_id, title, position, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)`, domainID, sc.CourseID, sc.Title, sc.Position, formatTime(sc.CreatedAt), formatTime(sc.UpdatedAt))
		return err
	})
	return sc, err
}

// Section returns one section.
func (s *Store) Section(ctx context.Context, domainID, id int64) (lms.Section, error) {
	return section(ctx, s.read(), domainID, id)
}

func section(ctx context.Context, d db, domainID, id int64) (lms.Section, error) {
	sc, err := scanSection(d.queryRow(ctx, "SELECT "+sectionCols+" FROM course_sections WHERE domain_id = ? AND id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return sc, lms.NotFoundf("section %d not found", id)
	}
	return sc, err
}

// UpdateSection sets a section's title (when title is not "") and moves
// it to position (when not 0; past the end means the end).
func (s *Store) UpdateSection(ctx context.Context, domainID, id int64, title string, position int) (lms.Section, error) {
	var sc lms.Section
	err := s.tx(ctx, func(tx db) error {
		var err error
		if sc, err = section(ctx, tx, domainID, id); err != nil {
			return err
		}
		if err := lockCourse(ctx, tx, domainID, sc.CourseID); err != nil {
			return err
		}
		if sc, err = section(ctx, tx, domainID, id); err != nil { // its position as of the lock
			return err
		}
		if title != "" {
			sc.Title = title
		}
		if position != 0 && position != sc.Position {
			n, err := tx.count(ctx, "SELECT COUNT(*) FROM course_sections WHERE domain_id = ? AND course_id = ?", domainID, sc.CourseID)
			if err != nil {
				return err
			}
			to := min(position, int(n))
			if err := shift(ctx, tx, "course_sections", "course_id", domainID, sc.CourseID, sc.Position, to); err != nil {
				return err
			}
			sc.Position = to
		}
		sc.UpdatedAt = s.now()
		_, err = tx.exec(ctx, "UPDATE course_sections SET title = ?, position = ?, updated_at = ? WHERE domain_id = ? AND id = ?",
			sc.Title, sc.Position, formatTime(sc.UpdatedAt), domainID, id)
		return err
	})
	return sc, err
}

// shift makes room for a row moving from position from to position to
// within the rows of table whose parentCol is parentID: the rows between
// slide by one.
func shift(ctx context.Context, tx db, table, parentCol string, domainID, parentID int64, from, to int) error {
	var err error
	switch {
	case to < from:
		_, err = tx.exec(ctx, "UPDATE "+table+" SET position = position + 1 WHERE domain_id = ? AND "+parentCol+
			" = ? AND position >= ? AND position < ?", domainID, parentID, to, from)
	case to > from:
		_, err = tx.exec(ctx, "UPDATE "+table+" SET position = position - 1 WHERE domain_id = ? AND "+parentCol+
			" = ? AND position > ? AND position <= ?", domainID, parentID, from, to)
	}
	return err
}

// DeleteSection deletes a section with its lessons (and their progress).
func (s *Store) DeleteSection(ctx context.Context, domainID, id int64) (lms.Section, error) {
	var sc lms.Section
	err := s.tx(ctx, func(tx db) error {
		var err error
		if sc, err = section(ctx, tx, domainID, id); err != nil {
			return err
		}
		if err := lockCourse(ctx, tx, domainID, sc.CourseID); err != nil {
			return err
		}
		if sc, err = section(ctx, tx, domainID, id); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "DELETE FROM course_sections WHERE domain_id = ? AND id = ?", domainID, id); err != nil {
			return err
		}
		_, err = tx.exec(ctx, "UPDATE course_sections SET position = position - 1 WHERE domain_id = ? AND course_id = ? AND position > ?",
			domainID, sc.CourseID, sc.Position)
		return err
	})
	return sc, err
}

// Sections returns a course's sections in order. An unknown course is not
// found.
func (s *Store) Sections(ctx context.Context, domainID, courseID int64) ([]lms.Section, error) {
	d := s.read()
	if err := mustExist(ctx, d, domainID, lms.KindCourse, courseID); err != nil {
		return nil, err
	}
	rows, err := d.query(ctx, "SELECT "+sectionCols+" FROM course_sections WHERE domain_id = ? AND course_id = ? ORDER BY position, id",
		domainID, courseID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.Section
	for rows.Next() {
		sc, err := scanSection(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

// Lessons

const lessonCols = `l.id, l.course_id, l.section_id, l.title, l.type, l.position, l.is_required, l.is_preview, l.body_md,
	l.embed_provider, l.embed_id, l.file_id, l.class_id, l.class_seq, l.test_id, l.duration_s, l.unlock_at, l.unlock_days,
	l.unlock_class_id, l.unlock_class_seq, l.created_at, l.updated_at`

func scanLesson(row interface{ Scan(...any) error }) (lms.Lesson, error) {
	var l lms.Lesson
	var fileID, classID, testID, unlockClass sql.NullInt64
	err := row.Scan(&l.ID, &l.CourseID, &l.SectionID, &l.Title, &l.Type, &l.Position, &l.IsRequired, &l.IsPreview, &l.BodyMD,
		&l.EmbedProvider, &l.EmbedID, &fileID, &classID, &l.ClassSeq, &testID, &l.DurationS, &l.Unlock.At, &l.Unlock.Days,
		&unlockClass, &l.Unlock.AfterClassSeq, timeCol(&l.CreatedAt), timeCol(&l.UpdatedAt))
	l.FileID, l.ClassID, l.TestID, l.Unlock.AfterClassID = fileID.Int64, classID.Int64, testID.Int64, unlockClass.Int64
	return l, err
}

func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

// checkLessonRefs is a not-found error when a lesson names a file, class
// or test the domain does not have.
func checkLessonRefs(ctx context.Context, d db, domainID int64, l lms.Lesson) error {
	if l.FileID != 0 {
		ok, err := d.exists(ctx, "SELECT 1 FROM learn_files WHERE domain_id = ? AND id = ?", domainID, l.FileID)
		if err != nil {
			return err
		}
		if !ok {
			return lms.NotFoundf("file %d not found", l.FileID)
		}
	}
	for _, ref := range []struct {
		kind string
		id   int64
	}{{lms.KindClass, l.ClassID}, {lms.KindTest, l.TestID}} {
		if ref.id != 0 {
			if err := mustExist(ctx, d, domainID, ref.kind, ref.id); err != nil {
				return err
			}
		}
	}
	return nil
}

// CreateLesson adds a lesson to a section at l.Position (the end when 0 or
// past it); the course is the section's.
func (s *Store) CreateLesson(ctx context.Context, domainID int64, l lms.Lesson) (lms.Lesson, error) {
	l.CreatedAt, l.UpdatedAt = s.now(), s.now()
	l.Unlock = lms.Unlock{Days: -1}
	err := s.tx(ctx, func(tx db) error {
		sc, err := section(ctx, tx, domainID, l.SectionID)
		if err != nil {
			return err
		}
		if err := lockCourse(ctx, tx, domainID, sc.CourseID); err != nil {
			return err
		}
		l.CourseID = sc.CourseID
		if err := checkLessonRefs(ctx, tx, domainID, l); err != nil {
			return err
		}
		n, err := tx.count(ctx, "SELECT COUNT(*) FROM lessons WHERE domain_id = ? AND section_id = ?", domainID, l.SectionID)
		if err != nil {
			return err
		}
		l.Position = clampPosition(l.Position, n)
		if _, err := tx.exec(ctx, "UPDATE lessons SET position = position + 1 WHERE domain_id = ? AND section_id = ? AND position >= ?",
			domainID, l.SectionID, l.Position); err != nil {
			return err
		}
		l.ID, err = tx.insert(ctx, `INSERT INTO lessons (domain_id, course_id, section_id, title, type, position, is_required,
			is_preview, body_md, embed_provider, embed_id, file_id, class_id, class_seq, test_id, duration_s, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			domainID, l.CourseID, l.SectionID, l.Title, l.Type, l.Position, lms.Flag(l.IsRequired), lms.Flag(l.IsPreview), l.BodyMD,
			l.EmbedProvider, l.EmbedID, nullID(l.FileID), nullID(l.ClassID), l.ClassSeq, nullID(l.TestID), l.DurationS,
			formatTime(l.CreatedAt), formatTime(l.UpdatedAt))
		return err
	})
	return l, err
}

// Lesson returns one lesson with its unlock conditions.
func (s *Store) Lesson(ctx context.Context, domainID, id int64) (lms.Lesson, error) {
	return lesson(ctx, s.read(), domainID, id)
}

func lesson(ctx context.Context, d db, domainID, id int64) (lms.Lesson, error) {
	l, err := scanLesson(d.queryRow(ctx, "SELECT "+lessonCols+" FROM lessons l WHERE l.domain_id = ? AND l.id = ?", domainID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return l, lms.NotFoundf("lesson %d not found", id)
	}
	if err != nil {
		return l, err
	}
	ls := []lms.Lesson{l}
	err = loadPrerequisites(ctx, d, domainID, ls)
	return ls[0], err
}

func loadPrerequisites(ctx context.Context, d db, domainID int64, ls []lms.Lesson) error {
	if len(ls) == 0 {
		return nil
	}
	byID := make(map[int64]*lms.Lesson, len(ls))
	args := []any{domainID}
	for i := range ls {
		byID[ls[i].ID] = &ls[i]
		args = append(args, ls[i].ID)
	}
	rows, err := d.query(ctx, `SELECT lesson_id, after_lesson_id FROM lesson_prerequisites WHERE domain_id = ? AND lesson_id IN (`+
		placeholders(len(ls))+`) ORDER BY lesson_id, after_lesson_id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, after int64
		if err := rows.Scan(&id, &after); err != nil {
			return err
		}
		l := byID[id]
		l.Unlock.AfterLessons = append(l.Unlock.AfterLessons, after)
	}
	return rows.Err()
}

// UpdateLesson applies edit to a lesson and saves its content fields (not
// its place: see MoveLesson; not its unlock conditions: see SetUnlock).
// edit may refuse with an error.
func (s *Store) UpdateLesson(ctx context.Context, domainID, id int64, edit func(*lms.Lesson) error) (lms.Lesson, error) {
	var l lms.Lesson
	err := s.tx(ctx, func(tx db) error {
		var err error
		if l, err = lesson(ctx, tx, domainID, id); err != nil {
			return err
		}
		if err := edit(&l); err != nil {
			return err
		}
		if err := checkLessonRefs(ctx, tx, domainID, l); err != nil {
			return err
		}
		l.UpdatedAt = s.now()
		_, err = tx.exec(ctx, `UPDATE lessons SET title = ?, type = ?, is_required = ?, is_preview = ?, body_md = ?,
			embed_provider = ?, embed_id = ?, file_id = ?, class_id = ?, class_seq = ?, test_id = ?, duration_s = ?, updated_at = ?
			WHERE domain_id = ? AND id = ?`,
			l.Title, l.Type, lms.Flag(l.IsRequired), lms.Flag(l.IsPreview), l.BodyMD, l.EmbedProvider, l.EmbedID, nullID(l.FileID),
			nullID(l.ClassID), l.ClassSeq, nullID(l.TestID), l.DurationS, formatTime(l.UpdatedAt), domainID, id)
		return err
	})
	return l, err
}

// DeleteLesson deletes a lesson with its progress, and takes it out of
// other lessons' prerequisites.
func (s *Store) DeleteLesson(ctx context.Context, domainID, id int64) (lms.Lesson, error) {
	var l lms.Lesson
	err := s.tx(ctx, func(tx db) error {
		var err error
		if l, err = lesson(ctx, tx, domainID, id); err != nil {
			return err
		}
		if err := lockCourse(ctx, tx, domainID, l.CourseID); err != nil {
			return err
		}
		if l, err = lesson(ctx, tx, domainID, id); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "DELETE FROM lessons WHERE domain_id = ? AND id = ?", domainID, id); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "DELETE FROM unlock_overrides WHERE domain_id = ? AND lesson_id = ?", domainID, id); err != nil {
			return err
		}
		_, err = tx.exec(ctx, "UPDATE lessons SET position = position - 1 WHERE domain_id = ? AND section_id = ? AND position > ?",
			domainID, l.SectionID, l.Position)
		return err
	})
	return l, err
}

// MoveLesson puts a lesson into a section of the same course at position
// (the end when 0 or past it).
func (s *Store) MoveLesson(ctx context.Context, domainID, id, sectionID int64, position int) (lms.Lesson, error) {
	var l lms.Lesson
	err := s.tx(ctx, func(tx db) error {
		var err error
		if l, err = lesson(ctx, tx, domainID, id); err != nil {
			return err
		}
		if err := lockCourse(ctx, tx, domainID, l.CourseID); err != nil {
			return err
		}
		if l, err = lesson(ctx, tx, domainID, id); err != nil {
			return err
		}
		sc, err := section(ctx, tx, domainID, sectionID)
		if err != nil {
			return err
		}
		if sc.CourseID != l.CourseID {
			return lms.Invalidf("section_id", "is a section of another course (lessons move within their course)")
		}
		if sectionID == l.SectionID {
			n, err := tx.count(ctx, "SELECT COUNT(*) FROM lessons WHERE domain_id = ? AND section_id = ?", domainID, sectionID)
			if err != nil {
				return err
			}
			to := int(n)
			if position > 0 && position < to {
				to = position
			}
			if err := shift(ctx, tx, "lessons", "section_id", domainID, sectionID, l.Position, to); err != nil {
				return err
			}
			l.Position = to
		} else {
			if _, err := tx.exec(ctx, "UPDATE lessons SET position = position - 1 WHERE domain_id = ? AND section_id = ? AND position > ?",
				domainID, l.SectionID, l.Position); err != nil {
				return err
			}
			n, err := tx.count(ctx, "SELECT COUNT(*) FROM lessons WHERE domain_id = ? AND section_id = ?", domainID, sectionID)
			if err != nil {
				return err
			}
			l.Position = clampPosition(position, n)
			if _, err := tx.exec(ctx, "UPDATE lessons SET position = position + 1 WHERE domain_id = ? AND section_id = ? AND position >= ?",
				domainID, sectionID, l.Position); err != nil {
				return err
			}
			l.SectionID = sectionID
		}
		l.UpdatedAt = s.now()
		_, err = tx.exec(ctx, "UPDATE lessons SET section_id = ?, position = ?, updated_at = ? WHERE domain_id = ? AND id = ?",
			l.SectionID, l.Position, formatTime(l.UpdatedAt), domainID, id)
		return err
	})
	return l, err
}

// LessonFilter selects lessons for Lessons: a course, optionally one of
// its sections.
type LessonFilter struct {
	CourseID  int64
	SectionID int64
}

// Lessons returns a course's (or a section's) lessons in outline order:
// by section position, then lesson position. An unknown course or
// section is not found.
func (s *Store) Lessons(ctx context.Context, domainID int64, f LessonFilter) ([]lms.Lesson, error) {
	d := s.read()
	where := "l.domain_id = ?"
	args := []any{domainID}
	if f.SectionID != 0 {
		sc, err := section(ctx, d, domainID, f.SectionID)
		if err != nil {
			return nil, err
		}
		where += " AND l.section_id = ?"
		args = append(args, sc.ID)
	} else {
		if err := mustExist(ctx, d, domainID, lms.KindCourse, f.CourseID); err != nil {
			return nil, err
		}
		where += " AND l.course_id = ?"
		args = append(args, f.CourseID)
	}
	rows, err := d.query(ctx, "SELECT "+lessonCols+` FROM lessons l JOIN course_sections s ON s.id = l.section_id
		WHERE `+where+" ORDER BY s.position, s.id, l.position, l.id", args...)
	if err != nil {
		return nil, err
	}
	var out []lms.Lesson
	for rows.Next() {
		l, err := scanLesson(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, loadPrerequisites(ctx, d, domainID, out)
}

// LessonsByTest returns the lessons of the domain that lead into a test.
func (s *Store) LessonsByTest(ctx context.Context, domainID, testID int64) ([]lms.Lesson, error) {
	rows, err := s.read().query(ctx, "SELECT "+lessonCols+" FROM lessons l WHERE l.domain_id = ? AND l.test_id = ? ORDER BY l.id",
		domainID, testID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lms.Lesson
	for rows.Next() {
		l, err := scanLesson(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// SetUnlock replaces a lesson's unlock conditions. Prerequisites must be
// other lessons of the same course; a named live class must be the
// domain's.
func (s *Store) SetUnlock(ctx context.Context, domainID, id int64, u lms.Unlock) (lms.Lesson, error) {
	var l lms.Lesson
	err := s.tx(ctx, func(tx db) error {
		var err error
		if l, err = lesson(ctx, tx, domainID, id); err != nil {
			return err
		}
		for _, after := range u.AfterLessons {
			if after == id {
				return lms.Invalidf("after_lesson_ids", "must not name the lesson itself")
			}
			var course int64
			err := tx.queryRow(ctx, "SELECT course_id FROM lessons WHERE domain_id = ? AND id = ?", domainID, after).Scan(&course)
			if errors.Is(err, sql.ErrNoRows) {
				return lms.NotFoundf("lesson %d not found", after)
			}
			if err != nil {
				return err
			}
			if course != l.CourseID {
				return lms.Invalidf("after_lesson_ids", "lesson %d is in another course", after)
			}
		}
		if u.AfterClassID != 0 {
			if err := mustExist(ctx, tx, domainID, lms.KindClass, u.AfterClassID); err != nil {
				return err
			}
		}
		if _, err := tx.exec(ctx, `UPDATE lessons SET unlock_at = ?, unlock_days = ?, unlock_class_id = ?, unlock_class_seq = ?,
			updated_at = ? WHERE domain_id = ? AND id = ?`, u.At, u.Days, nullID(u.AfterClassID), u.AfterClassSeq,
			formatTime(s.now()), domainID, id); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "DELETE FROM lesson_prerequisites WHERE domain_id = ? AND lesson_id = ?", domainID, id); err != nil {
			return err
		}
		for _, after := range u.AfterLessons {
			if _, err := tx.exec(ctx, `INSERT INTO lesson_prerequisites (domain_id, lesson_id, after_lesson_id) VALUES (?, ?, ?)
				ON CONFLICT DO NOTHING`, domainID, id, after); err != nil {
				return err
			}
		}
		l, err = lesson(ctx, tx, domainID, id)
		return err
	})
	return l, err
}

// AddOverride opens lesson lessonID (0: every lesson) of a course for one
// learner. The lesson must be the course's. Adding it twice is no change.
func (s *Store) AddOverride(ctx context.Context, domainID, courseID, userID, lessonID int64) error {
	return s.tx(ctx, func(tx db) error {
		if err := mustExist(ctx, tx, domainID, lms.KindCourse, courseID); err != nil {
			return err
		}
		if _, err := user(ctx, tx, domainID, userID); err != nil {
			return err
		}
		if lessonID != 0 {
			l, err := lesson(ctx, tx, domainID, lessonID)
			if err != nil {
				return err
			}
			if l.CourseID != courseID {
				return lms.Invalidf("lesson_id", "is a lesson of another course")
			}
		}
		_, err := tx.exec(ctx, `INSERT INTO unlock_overrides (domain_id, course_id, user_id, lesson_id, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, domainID, courseID, userID, lessonID, formatTime(s.now()))
		return err
	})
}

// RemoveOverride takes an override away; removing one that does not exist
// is no change. It reports whether one was removed.
func (s *Store) RemoveOverride(ctx context.Context, domainID, courseID, userID, lessonID int64) (bool, error) {
	removed := false
	err := s.tx(ctx, func(tx db) error {
		res, err := tx.exec(ctx, "DELETE FROM unlock_overrides WHERE domain_id = ? AND course_id = ? AND user_id = ? AND lesson_id = ?",
			domainID, courseID, userID, lessonID)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		removed = n > 0
		return nil
	})
	return removed, err
}

// Overrides returns the lesson ids opened for a learner in a course (0:
// all).
func (s *Store) Overrides(ctx context.Context, domainID, courseID, userID int64) (map[int64]bool, error) {
	rows, err := s.read().query(ctx, "SELECT lesson_id FROM unlock_overrides WHERE domain_id = ? AND course_id = ? AND user_id = ?",
		domainID, courseID, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// Files

// CreateFile records an uploaded file already in the blob store.
func (s *Store) CreateFile(ctx context.Context, domainID int64, f lms.LearnFile) (lms.LearnFile, error) {
	f.CreatedAt = s.now()
	err := s.tx(ctx, func(tx db) error {
		var err error
		f.ID, err = tx.insert(ctx, `INSERT INTO learn_files (domain_id, blob_key, name, content_type, size, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, domainID, f.BlobKey, f.Name, f.ContentType, f.Size, formatTime(f.CreatedAt))
		return err
	})
	return f, err
}

// File returns one uploaded file.
func (s *Store) File(ctx context.Context, domainID, id int64) (lms.LearnFile, error) {
	var f lms.LearnFile
	err := s.read().queryRow(ctx, `SELECT id, blob_key, name, content_type, size, created_at FROM learn_files
		WHERE domain_id = ? AND id = ?`, domainID, id).Scan(&f.ID, &f.BlobKey, &f.Name, &f.ContentType, &f.Size, timeCol(&f.CreatedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return f, lms.NotFoundf("file %d not found", id)
	}
	return f, err
}
