package lmsapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// learningRoutes are the course-content and progress endpoints.
func (a *API) learningRoutes(rt *httpx.Router) {
	a.handle(rt, "POST", "/sections/create", a.createSection)
	a.handle(rt, "PUT", "/sections/update/{section_id}", a.updateSection)
	a.handle(rt, "DELETE", "/sections/delete/{section_id}", a.deleteSection)
	a.handle(rt, "POST", "/sections/list", a.listSections)

	a.handle(rt, "POST", "/lessons/create", a.createLesson)
	a.handle(rt, "GET", "/lessons/get/{lesson_id}", a.getLesson)
	a.handle(rt, "PUT", "/lessons/update/{lesson_id}", a.updateLesson)
	a.handle(rt, "DELETE", "/lessons/delete/{lesson_id}", a.deleteLesson)
	a.handle(rt, "POST", "/lessons/list", a.listLessons)
	a.handle(rt, "POST", "/lessons/move", a.moveLesson)
	a.handle(rt, "POST", "/lessons/unlock/set", a.setUnlock)

	a.handle(rt, "GET", "/courses/outline/{course_id}", a.courseOutline)
	a.handle(rt, "PUT", "/courses/settings/{course_id}", a.courseSettings)
	a.handle(rt, "POST", "/unlock/override", a.unlockOverride)
	rt.Handle("POST", Prefix+"/files/upload", a.wrapUpload(a.uploadFile))

	a.handle(rt, "POST", "/progress/get", a.progressGet)
	a.handle(rt, "POST", "/progress/list", a.progressList)
	a.handle(rt, "POST", "/progress/markComplete", a.progressMarkComplete)
	a.handle(rt, "POST", "/progress/reset", a.progressReset)
}

// idAlias reads a required id sent as name or as alias (the seed's
// camelCase spelling, e.g. courseId for course_id); errors name name.
func idAlias(c *call, v *lms.Validator, name, alias string) int64 {
	if !c.P.Has(name) && c.P.Has(alias) {
		c.P.Set(name, c.P.Get(alias))
	}
	return c.P.ID(v, name)
}

// optID reads an optional id: 0 when absent or sent as 0 (none).
func optID(c *call, v *lms.Validator, name string) int64 {
	n, ok := c.P.Int(v, name)
	if ok && n < 0 {
		v.Add(name, "must be a positive integer, or 0 for none")
	}
	return n
}

// Wire shapes

type sectionJSON struct {
	ID        int64  `json:"id"`
	SectionID int64  `json:"section_id"`
	CourseID  int64  `json:"course_id"`
	Title     string `json:"title"`
	Position  int    `json:"position"`
}

func toSection(s lms.Section) sectionJSON {
	return sectionJSON{ID: s.ID, SectionID: s.ID, CourseID: s.CourseID, Title: s.Title, Position: s.Position}
}

type unlockJSON struct {
	At                *string `json:"at"`
	DaysAfterEnroll   *int    `json:"days_after_enroll"`
	AfterLessonIDs    []int64 `json:"after_lesson_ids"`
	AfterClassID      *int64  `json:"after_class_id"`
	AfterClassSitting int     `json:"after_class_sitting"`
}

type lessonJSON struct {
	ID            int64      `json:"id"`
	LessonID      int64      `json:"lesson_id"`
	CourseID      int64      `json:"course_id"`
	SectionID     int64      `json:"section_id"`
	Title         string     `json:"title"`
	Type          string     `json:"type"`
	Position      int        `json:"position"`
	IsRequired    int        `json:"is_required"`
	IsPreview     int        `json:"is_preview"`
	BodyMD        string     `json:"body_md"`
	EmbedProvider *string    `json:"embed_provider"`
	EmbedID       *string    `json:"embed_id"`
	FileID        *int64     `json:"file_id"`
	ClassID       *int64     `json:"class_id"`
	ClassSitting  int        `json:"class_sitting"`
	TestID        *int64     `json:"test_id"`
	DurationS     int        `json:"duration_s"`
	Unlock        unlockJSON `json:"unlock"`
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optInt64(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

func toLesson(l lms.Lesson) lessonJSON {
	u := unlockJSON{At: optStr(l.Unlock.At), AfterLessonIDs: l.Unlock.AfterLessons, AfterClassID: optInt64(l.Unlock.AfterClassID),
		AfterClassSitting: l.Unlock.AfterClassSeq}
	if u.AfterLessonIDs == nil {
		u.AfterLessonIDs = []int64{}
	}
	if l.Unlock.Days >= 0 {
		d := l.Unlock.Days
		u.DaysAfterEnroll = &d
	}
	return lessonJSON{ID: l.ID, LessonID: l.ID, CourseID: l.CourseID, SectionID: l.SectionID, Title: l.Title, Type: l.Type,
		Position: l.Position, IsRequired: lms.Flag(l.IsRequired), IsPreview: lms.Flag(l.IsPreview), BodyMD: l.BodyMD,
		EmbedProvider: optStr(l.EmbedProvider), EmbedID: optStr(l.EmbedID), FileID: optInt64(l.FileID),
		ClassID: optInt64(l.ClassID), ClassSitting: l.ClassSeq, TestID: optInt64(l.TestID), DurationS: l.DurationS, Unlock: u}
}

func toLessons(ls []lms.Lesson) []lessonJSON {
	out := make([]lessonJSON, len(ls))
	for i, l := range ls {
		out[i] = toLesson(l)
	}
	return out
}

// Sections

// POST /sections/create: course_id, title, position (1-based; default the
// end).
func (a *API) createSection(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	sc := lms.Section{CourseID: idAlias(c, &v, "course_id", "courseId"), Title: c.P.RequiredString(&v, "title")}
	checkLen(&v, "title", sc.Title, maxName)
	sc.Position = int(c.P.Range(&v, "position", 0, 1, 1<<20))
	if err := v.Err(); err != nil {
		return err
	}
	sc, err := a.Store.CreateSection(r.Context(), c.Domain.ID, sc)
	if err != nil {
		return err
	}
	return ok(w, "Section created", toSection(sc))
}

// PUT /sections/update/{section_id}: title and/or position.
func (a *API) updateSection(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "section_id")
	v.Check(!c.P.Sent("title") || c.P.Has("title"), "title", "must not be blank")
	checkLen(&v, "title", c.P.Get("title"), maxName)
	pos := int(c.P.Range(&v, "position", 0, 1, 1<<20))
	if err := v.Err(); err != nil {
		return err
	}
	sc, err := a.Store.UpdateSection(r.Context(), c.Domain.ID, id, c.P.Get("title"), pos)
	if err != nil {
		return err
	}
	return ok(w, "Section updated", toSection(sc))
}

// DELETE /sections/delete/{section_id}: the section and its lessons.
func (a *API) deleteSection(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "section_id")
	if err != nil {
		return err
	}
	if _, err := a.Store.DeleteSection(r.Context(), c.Domain.ID, id); err != nil {
		return err
	}
	return ok(w, "Section deleted", map[string]any{"id": id})
}

// POST /sections/list: course_id. Every section of the course, in order.
func (a *API) listSections(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	courseID := idAlias(c, &v, "course_id", "courseId")
	if err := v.Err(); err != nil {
		return err
	}
	ss, err := a.Store.Sections(r.Context(), c.Domain.ID, courseID)
	if err != nil {
		return err
	}
	data := make([]sectionJSON, len(ss))
	for i, s := range ss {
		data[i] = toSection(s)
	}
	return writeJSON(w, map[string]any{"message": "Sections listed", "data": data, "total": len(data)})
}

// Lessons

// readLesson reads the lesson fields sent into l (on create every field;
// on update only those sent) and checks the result.
func readLesson(c *call, v *lms.Validator, l *lms.Lesson) {
	if c.P.Sent("title") {
		l.Title = c.P.Get("title")
	}
	if c.P.Sent("type") {
		l.Type = c.P.Get("type")
	}
	if c.P.Sent("body_md") {
		l.BodyMD = c.P.Raw("body_md")
	}
	if c.P.Sent("is_required") {
		l.IsRequired = boolParam(c, v, "is_required", l.IsRequired)
	}
	if c.P.Sent("is_preview") {
		l.IsPreview = boolParam(c, v, "is_preview", l.IsPreview)
	}
	if c.P.Sent("duration_s") {
		l.DurationS = int(c.P.Range(v, "duration_s", 0, 0, 1<<31-1))
	}
	learn.Normalise(l)
	for _, f := range learn.TypeSpecificFields {
		if c.P.Has(f) && !learn.FieldFor(l.Type, f) && !v.Has("type") {
			v.Add(f, "is only for lessons of type "+learn.TypesWith(f))
		}
	}
	if c.P.Sent("file_id") {
		l.FileID = optID(c, v, "file_id")
	}
	if c.P.Sent("embed_provider") {
		l.EmbedProvider = c.P.Get("embed_provider")
	}
	if c.P.Sent("embed_id") {
		l.EmbedID = c.P.Get("embed_id")
	}
	if c.P.Has("embed_url") && learn.FieldFor(l.Type, "embed_url") {
		if c.P.Has("embed_provider") || c.P.Has("embed_id") {
			v.Add("embed_url", "send embed_url or embed_provider with embed_id, not both")
		} else if p, id, ok := learn.ParseEmbedURL(c.P.Get("embed_url")); ok {
			l.EmbedProvider, l.EmbedID = p, id
		} else {
			v.Add("embed_url", "must be the address of a YouTube or Vimeo video (https://youtu.be/…, https://vimeo.com/…)")
		}
	}
	if c.P.Sent("class_id") {
		l.ClassID = optID(c, v, "class_id")
	}
	if c.P.Sent("class_sitting") {
		l.ClassSeq = int(c.P.Range(v, "class_sitting", 0, 0, 1<<20))
	}
	if c.P.Sent("test_id") {
		l.TestID = optID(c, v, "test_id")
	}
	learn.CheckLesson(*l, v)
}

// POST /lessons/create: section_id, title, type, position, is_required
// (default 1), is_preview (default 0), body_md, duration_s and the
// fields of the type (file_id; embed_provider + embed_id, or embed_url;
// class_id + class_sitting; test_id).
func (a *API) createLesson(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	l := lms.Lesson{IsRequired: true, Type: c.P.Get("type")}
	l.SectionID = idAlias(c, &v, "section_id", "sectionId")
	l.Position = int(c.P.Range(&v, "position", 0, 1, 1<<20))
	if !c.P.Has("type") {
		v.Add("type", "is required: one of "+strings.Join(lms.LessonTypes, ", "))
	}
	readLesson(c, &v, &l)
	if err := v.Err(); err != nil {
		return err
	}
	l, err := a.Store.CreateLesson(r.Context(), c.Domain.ID, l)
	if err != nil {
		return err
	}
	return ok(w, "Lesson created", toLesson(l))
}

// GET /lessons/get/{lesson_id}.
func (a *API) getLesson(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "lesson_id")
	if err != nil {
		return err
	}
	l, err := a.Store.Lesson(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Lesson found", toLesson(l))
}

// PUT /lessons/update/{lesson_id}: any lesson field; those not sent keep
// their value. A change of type clears the fields of the old type.
func (a *API) updateLesson(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "lesson_id")
	for _, f := range []string{"position", "section_id"} {
		if c.P.Sent(f) {
			v.Add(f, "cannot be changed here; use POST /lessons/move")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	l, err := a.Store.UpdateLesson(r.Context(), c.Domain.ID, id, func(l *lms.Lesson) error {
		readLesson(c, &v, l)
		return v.Err()
	})
	if err != nil {
		return err
	}
	return ok(w, "Lesson updated", toLesson(l))
}

// DELETE /lessons/delete/{lesson_id}.
func (a *API) deleteLesson(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "lesson_id")
	if err != nil {
		return err
	}
	if _, err := a.Store.DeleteLesson(r.Context(), c.Domain.ID, id); err != nil {
		return err
	}
	return ok(w, "Lesson deleted", map[string]any{"id": id})
}

// POST /lessons/list: course_id or section_id. Every lesson, in outline
// order.
func (a *API) listLessons(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	var f store.LessonFilter
	switch {
	case c.P.Has("section_id") || c.P.Has("sectionId"):
		f.SectionID = idAlias(c, &v, "section_id", "sectionId")
	case c.P.Has("course_id") || c.P.Has("courseId"):
		f.CourseID = idAlias(c, &v, "course_id", "courseId")
	default:
		v.Add("course_id", "is required unless section_id is sent")
	}
	if err := v.Err(); err != nil {
		return err
	}
	ls, err := a.Store.Lessons(r.Context(), c.Domain.ID, f)
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"message": "Lessons listed", "data": toLessons(ls), "total": len(ls)})
}

// POST /lessons/move: lesson_id, section_id (of the same course),
// position (default the end).
func (a *API) moveLesson(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := idAlias(c, &v, "lesson_id", "lessonId")
	sectionID := idAlias(c, &v, "section_id", "sectionId")
	pos := int(c.P.Range(&v, "position", 0, 1, 1<<20))
	if err := v.Err(); err != nil {
		return err
	}
	l, err := a.Store.MoveLesson(r.Context(), c.Domain.ID, id, sectionID, pos)
	if err != nil {
		return err
	}
	return ok(w, "Lesson moved", toLesson(l))
}

// idList reads a list of ids sent as a JSON array or comma-separated.
func idList(c *call, v *lms.Validator, name string) []int64 {
	raw := c.P.Get(name)
	if raw == "" {
		return nil
	}
	var ids []int64
	if strings.HasPrefix(raw, "[") {
		if err := json.Unmarshal([]byte(raw), &ids); err != nil {
			v.Add(name, "must be a list of lesson ids")
			return nil
		}
	} else {
		for _, s := range strings.Split(raw, ",") {
			n, err := httpx.ParseInt(s)
			if err != nil {
				v.Add(name, "must be a list of lesson ids")
				return nil
			}
			ids = append(ids, n)
		}
	}
	for _, id := range ids {
		if id <= 0 {
			v.Add(name, "must hold positive lesson ids")
			return nil
		}
	}
	return ids
}

// POST /lessons/unlock/set: lesson_id and the conditions, each optional;
// the call replaces every condition (send none to clear them): at (an
// RFC 3339 instant, or a local YYYY-MM-DDTHH:MM in the course's zone),
// days_after_enroll, after_lesson_ids, after_class_id + after_class_sitting
// (0: the class's last sitting).
func (a *API) setUnlock(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := idAlias(c, &v, "lesson_id", "lessonId")
	u := lms.Unlock{At: c.P.Get("at"), Days: int(c.P.Range(&v, "days_after_enroll", -1, 0, 3650))}
	if u.At != "" {
		if _, err := learn.ParseUnlockAt(u.At, time.UTC); err != nil {
			v.Add("at", "must be an RFC 3339 instant (2026-03-09T09:00:00Z) or a local date and time (2026-03-09T09:00) in the course's zone")
		}
	}
	u.AfterLessons = idList(c, &v, "after_lesson_ids")
	u.AfterClassID = optID(c, &v, "after_class_id")
	u.AfterClassSeq = int(c.P.Range(&v, "after_class_sitting", 0, 0, 1<<20))
	if u.AfterClassSeq != 0 && u.AfterClassID == 0 && !v.Has("after_class_id") {
		v.Add("after_class_id", "is required with after_class_sitting")
	}
	if err := v.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	if u.AfterClassID != 0 && u.AfterClassSeq != 0 {
		cl, err := a.Store.LiveClass(ctx, c.Domain.ID, u.AfterClassID)
		if err != nil {
			return err
		}
		if _, found := learn.SittingEnd(cl.Occurrences, u.AfterClassSeq); !found {
			return lms.Invalidf("after_class_sitting", "live class %d has no sitting %d", u.AfterClassID, u.AfterClassSeq)
		}
	}
	l, err := a.Store.SetUnlock(ctx, c.Domain.ID, id, u)
	if err != nil {
		return err
	}
	return ok(w, "Unlock conditions set", toLesson(l))
}

// GET /courses/outline/{course_id}: the course, its settings, and its
// sections with their lessons in order.
func (a *API) courseOutline(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "course_id")
	if err != nil {
		return err
	}
	ctx := r.Context()
	co, err := a.Store.Course(ctx, c.Domain.ID, id)
	if err != nil {
		return err
	}
	cs, err := a.Store.CourseSettings(ctx, c.Domain.ID, id)
	if err != nil {
		return err
	}
	ss, err := a.Store.Sections(ctx, c.Domain.ID, id)
	if err != nil {
		return err
	}
	ls, err := a.Store.Lessons(ctx, c.Domain.ID, store.LessonFilter{CourseID: id})
	if err != nil {
		return err
	}
	type section struct {
		sectionJSON
		Lessons []lessonJSON `json:"lessons"`
	}
	sections := make([]section, len(ss))
	index := map[int64]int{}
	for i, s := range ss {
		sections[i] = section{sectionJSON: toSection(s), Lessons: []lessonJSON{}}
		index[s.ID] = i
	}
	for _, l := range ls {
		i := index[l.SectionID]
		sections[i].Lessons = append(sections[i].Lessons, toLesson(l))
	}
	return ok(w, "Course outline", map[string]any{"course_id": co.ID, "course_name": co.Name,
		"settings": toSettings(cs), "sections": sections, "lessons_total": len(ls)})
}

func toSettings(cs lms.CourseSettings) map[string]any {
	return map[string]any{"navigation": cs.Navigation, "timezone": cs.Timezone, "attendance_percent": cs.AttendancePercent}
}

// PUT /courses/settings/{course_id}: navigation (free | sequential),
// timezone (IANA), attendance_percent (1-100); those not sent keep their
// value.
func (a *API) courseSettings(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "course_id")
	nav := c.P.Get("navigation")
	if c.P.Sent("navigation") && nav != lms.NavigationFree && nav != lms.NavigationSequential {
		v.Add("navigation", "must be free or sequential")
	}
	tz := c.P.Get("timezone")
	if c.P.Sent("timezone") && !learn.ValidZone(tz) {
		v.Add("timezone", "must be an IANA time zone such as Europe/Berlin or America/New_York")
	}
	pct := c.P.Range(&v, "attendance_percent", 0, 1, 100)
	if err := v.Err(); err != nil {
		return err
	}
	cs, err := a.Store.UpdateCourseSettings(r.Context(), c.Domain.ID, id, func(cs *lms.CourseSettings) {
		if nav != "" {
			cs.Navigation = nav
		}
		if tz != "" {
			cs.Timezone = tz
		}
		if pct != 0 {
			cs.AttendancePercent = int(pct)
		}
	})
	if err != nil {
		return err
	}
	return ok(w, "Course settings updated", toSettings(cs))
}

// POST /unlock/override: course_id, the learner (email or user_id), and
// lesson_id or all=1; remove=1 takes the override away.
func (a *API) unlockOverride(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	courseID := idAlias(c, &v, "course_id", "courseId")
	ref := readUserRef(c, &v)
	all := boolParam(c, &v, "all", false)
	remove := boolParam(c, &v, "remove", false)
	var lessonID int64
	switch {
	case all && (c.P.Has("lesson_id") || c.P.Has("lessonId")):
		v.Add("lesson_id", "send lesson_id or all=1, not both")
	case !all:
		if !c.P.Has("lesson_id") && !c.P.Has("lessonId") {
			v.Add("lesson_id", "is required unless all=1 is sent")
		} else {
			lessonID = idAlias(c, &v, "lesson_id", "lessonId")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	userID, err := a.resolveUser(ctx, c.Domain.ID, ref)
	if err != nil {
		return err
	}
	data := map[string]any{"course_id": courseID, "user_id": userID, "lesson_id": optInt64(lessonID), "all": lms.Flag(all)}
	if remove {
		if _, err := a.Store.Course(ctx, c.Domain.ID, courseID); err != nil {
			return err
		}
		removed, err := a.Store.RemoveOverride(ctx, c.Domain.ID, courseID, userID, lessonID)
		if err != nil {
			return err
		}
		if !removed {
			return lms.NotFoundf("no such override for user %d in course %d", userID, courseID)
		}
		return ok(w, "Override removed", data)
	}
	if err := a.Store.AddOverride(ctx, c.Domain.ID, courseID, userID, lessonID); err != nil {
		return err
	}
	return ok(w, "Override set", data)
}

// itoa64 formats an id.
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
