package learn

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Service applies the rules of this package to the store. The management
// API and the learner portal both go through it, so a lock, a completion
// or an award is decided in one place.
type Service struct {
	Store  *store.Store
	Blobs  blob.Store
	Now    func() time.Time
	Secret []byte // server secret for media-URL signing
	// OnCourseCompleted runs after a course's completed_at is first set
	// (certificates). It runs again on a later recompute until it has
	// returned nil once, so it must be idempotent.
	OnCourseCompleted func(ctx context.Context, domainID, courseID, userID int64, at time.Time) error
	// Logger receives errors of the completion hook (slog.Default when
	// nil).
	Logger *slog.Logger
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Second)
	}
	return time.Now().UTC().Truncate(time.Second)
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// ErrNotEnrolled is the error of a progress write by a learner who is not
// enrolled in the course (a visitor on a free preview).
var ErrNotEnrolled = &lms.Error{Code: lms.CodeForbidden, Message: "the learner is not enrolled in this course"}

// snapshot is everything the rules need about one learner in one course.
type snapshot struct {
	course   lms.Course
	content  Course
	learner  Learner
	result   Result
	complete CourseCompletionInfo
}

// CourseCompletionInfo is a learner's stored course completion.
type CourseCompletionInfo struct {
	CompletedAt time.Time
	notified    bool
}

// load reads a course and, for userID != 0, that learner's state, then
// evaluates the rules and records what they newly found complete.
func (s *Service) load(ctx context.Context, domainID, courseID, userID int64) (*snapshot, error) {
	course, err := s.Store.Course(ctx, domainID, courseID)
	if err != nil {
		return nil, err
	}
	sn := &snapshot{course: course}
	if sn.content.Settings, err = s.Store.CourseSettings(ctx, domainID, courseID); err != nil {
		return nil, err
	}
	if sn.content.Sections, err = s.Store.Sections(ctx, domainID, courseID); err != nil {
		return nil, err
	}
	if sn.content.Lessons, err = s.Store.Lessons(ctx, domainID, store.LessonFilter{CourseID: courseID}); err != nil {
		return nil, err
	}
	in := Learner{Progress: map[int64]lms.LessonProgress{}, Overrides: map[int64]bool{}, TestPassed: map[int64]bool{},
		Attendance: map[int64][]lms.AttendanceEvent{}, Sittings: map[int64][]lms.Occurrence{}, RecordingS: map[int64]int{}}
	if userID != 0 {
		if err := s.loadLearner(ctx, domainID, courseID, userID, sn.content, &in); err != nil {
			return nil, err
		}
	}
	sn.learner = in
	now := s.now()
	sn.result = Evaluate(sn.content, in, now)
	if userID != 0 && in.Enrolled {
		if err := s.record(ctx, domainID, userID, sn, now); err != nil {
			return nil, err
		}
	}
	return sn, nil
}

func (s *Service) loadLearner(ctx context.Context, domainID, courseID, userID int64, c Course, in *Learner) error {
	var err error
	if in.EnrolledAt, in.Enrolled, err = s.Store.EnrolledAt(ctx, domainID, userID, courseID); err != nil {
		return err
	}
	if in.Progress, err = s.Store.CourseProgress(ctx, domainID, courseID, userID); err != nil {
		return err
	}
	if in.Overrides, err = s.Store.Overrides(ctx, domainID, courseID, userID); err != nil {
		return err
	}
	results, err := s.Store.TestResults(ctx, domainID, userID)
	if err != nil {
		return err
	}
	for id, r := range results {
		in.TestPassed[id] = r.Passed
	}
	ref := strconv.FormatInt(userID, 10)
	for _, l := range c.Lessons {
		for _, classID := range []int64{l.ClassID, l.Unlock.AfterClassID} {
			if classID == 0 {
				continue
			}
			if _, seen := in.Sittings[classID]; !seen {
				cl, err := s.Store.LiveClass(ctx, domainID, classID)
				if err != nil && !lms.IsNotFound(err) {
					return err
				}
				in.Sittings[classID] = cl.Occurrences
			}
		}
		if l.Type != lms.LessonLiveClass || l.ClassID == 0 {
			continue
		}
		if _, seen := in.Attendance[l.ClassID]; !seen {
			if in.Attendance[l.ClassID], err = s.Store.Attendance(ctx, domainID, l.ClassID, ref); err != nil {
				return err
			}
		}
		rec, err := s.recording(ctx, domainID, l)
		if err != nil {
			return err
		}
		in.RecordingS[l.ID] = int(rec.DurationMS / 1000)
	}
	return nil
}

// recording is the recording a live-class lesson shows: the newest ready,
// published one of its class (of its sitting when it names one).
func (s *Service) recording(ctx context.Context, domainID int64, l lms.Lesson) (lms.Recording, error) {
	if l.ClassID == 0 {
		return lms.Recording{}, nil
	}
	recs, err := s.Store.ClassRecordings(ctx, domainID, l.ClassID, "")
	if err != nil {
		return lms.Recording{}, err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.State == lms.RecordingReady && r.Status == 1 && r.BlobKey != "" && (l.ClassSeq == 0 || r.OccurrenceSeq == l.ClassSeq) {
			return r, nil
		}
	}
	return lms.Recording{}, nil
}

// record stores the completions the rules newly found (giving their
// points once) and, when every required lesson is done, the course's
// completion, then runs the completion hook until it has succeeded once.
func (s *Service) record(ctx context.Context, domainID, userID int64, sn *snapshot, now time.Time) error {
	for _, id := range sn.result.Complete {
		l := sn.lesson(id)
		if _, err := s.Store.CompleteLesson(ctx, domainID, l, userID, now); err != nil {
			return err
		}
	}
	done, err := s.Store.CourseCompletionOf(ctx, domainID, sn.course.ID, userID)
	if err != nil {
		return err
	}
	if done.CompletedAt.IsZero() && sn.result.CourseComplete {
		if done, _, err = s.Store.CompleteCourse(ctx, domainID, sn.course.ID, userID, now); err != nil {
			return err
		}
	}
	sn.complete = CourseCompletionInfo{CompletedAt: done.CompletedAt, notified: !done.NotifiedAt.IsZero()}
	if !done.CompletedAt.IsZero() && done.NotifiedAt.IsZero() {
		s.notify(ctx, domainID, sn.course.ID, userID, done.CompletedAt)
	}
	return nil
}

// notify runs OnCourseCompleted and records that it succeeded. A failure
// is logged; the next recompute tries again.
func (s *Service) notify(ctx context.Context, domainID, courseID, userID int64, at time.Time) {
	if s.OnCourseCompleted != nil {
		if err := s.OnCourseCompleted(ctx, domainID, courseID, userID, at); err != nil {
			s.logger().Error("course completion hook", "domain", domainID, "course", courseID, "user", userID, "err", err)
			return
		}
	}
	if err := s.Store.MarkCourseNotified(ctx, domainID, courseID, userID, s.now()); err != nil {
		s.logger().Error("record course completion hook", "domain", domainID, "course", courseID, "user", userID, "err", err)
	}
}

func (sn *snapshot) lesson(id int64) lms.Lesson {
	for _, l := range sn.content.Lessons {
		if l.ID == id {
			return l
		}
	}
	return lms.Lesson{}
}

// view builds the outline from a snapshot.
func (sn *snapshot) view() CourseView {
	v := CourseView{Course: sn.course, Settings: sn.content.Settings, Enrolled: sn.learner.Enrolled,
		EnrolledAt: sn.learner.EnrolledAt, Percent: sn.result.Percent, RequiredDone: sn.result.RequiredDone,
		RequiredTotal: sn.result.RequiredTotal, CompletedAt: sn.complete.CompletedAt, NextLessonID: sn.result.Next}
	bySection := map[int64][]LessonItem{}
	for _, l := range sn.content.Lessons {
		it := item(l, sn.result.Status[l.ID])
		p := sn.learner.Progress[l.ID]
		it.Position = p.Position
		duration := l.DurationS
		if l.Type == lms.LessonLiveClass {
			duration = sn.learner.RecordingS[l.ID]
		}
		if l.Type == lms.LessonVideo || l.Type == lms.LessonAudio || l.Type == lms.LessonLiveClass {
			it.WatchedPercent = CoveragePercent(p.Watched, duration)
		}
		bySection[l.SectionID] = append(bySection[l.SectionID], it)
	}
	for _, sc := range sn.content.Sections {
		v.Sections = append(v.Sections, SectionView{ID: sc.ID, Title: sc.Title, Position: sc.Position, Lessons: bySection[sc.ID]})
	}
	return v
}

func item(l lms.Lesson, st Status) LessonItem {
	return LessonItem{ID: l.ID, SectionID: l.SectionID, Title: l.Title, Type: l.Type, IsRequired: l.IsRequired,
		IsPreview: l.IsPreview, DurationS: l.DurationS, Status: st}
}

// Outline returns a course's sections and lessons with each lesson's state
// for a learner (userID 0: a visitor, who sees only free previews open),
// the percentage of required lessons done, and the next lesson. It
// records completions the rules find (an attended live class, say).
func (s *Service) Outline(ctx context.Context, domainID, courseID, userID int64) (CourseView, error) {
	sn, err := s.load(ctx, domainID, courseID, userID)
	if err != nil {
		return CourseView{}, err
	}
	return sn.view(), nil
}

// lessonSnapshot loads the course of a lesson for a learner.
func (s *Service) lessonSnapshot(ctx context.Context, domainID, userID, lessonID int64) (lms.Lesson, *snapshot, error) {
	l, err := s.Store.Lesson(ctx, domainID, lessonID)
	if err != nil {
		return l, nil, err
	}
	sn, err := s.load(ctx, domainID, l.CourseID, userID)
	if err != nil {
		return l, nil, err
	}
	return sn.lesson(lessonID), sn, nil
}

// locked returns ErrLocked for a locked lesson.
func locked(st Status) error {
	if st.State != Locked {
		return nil
	}
	return ErrLocked{Reason: st.Reason, At: st.UnlockAt, After: st.After}
}

// Lesson opens a lesson for a learner: lms not found when the domain has
// no such lesson, ErrLocked when it is locked for them. An enrolled
// learner's first opening is recorded.
func (s *Service) Lesson(ctx context.Context, domainID, userID, lessonID int64) (LessonView, error) {
	l, sn, err := s.lessonSnapshot(ctx, domainID, userID, lessonID)
	if err != nil {
		return LessonView{}, err
	}
	st := sn.result.Status[l.ID]
	if err := locked(st); err != nil {
		return LessonView{}, err
	}
	p := sn.learner.Progress[l.ID]
	if sn.learner.Enrolled && p.OpenedAt.IsZero() {
		at := s.now()
		if p, err = s.Store.UpdateProgress(ctx, domainID, l, userID, func(p *lms.LessonProgress) {
			if p.OpenedAt.IsZero() {
				p.OpenedAt = at
			}
		}); err != nil {
			return LessonView{}, err
		}
	}
	v := LessonView{LessonItem: item(l, st), CourseID: sn.course.ID, CourseTitle: sn.course.Name, Enrolled: sn.learner.Enrolled,
		ClassID: l.ClassID, ClassSeq: l.ClassSeq, TestID: l.TestID}
	v.Position = p.Position
	lessons := sn.content.Lessons
	i := slices.IndexFunc(lessons, func(x lms.Lesson) bool { return x.ID == l.ID })
	if i > 0 {
		v.PrevLessonID = lessons[i-1].ID
	}
	if i >= 0 && i+1 < len(lessons) {
		v.NextLessonID = lessons[i+1].ID
	}
	switch l.Type {
	case lms.LessonText:
		v.HTML = RenderMarkdown(l.BodyMD)
	case lms.LessonEmbed:
		v.EmbedProvider, v.EmbedID, v.EmbedURL = l.EmbedProvider, l.EmbedID, EmbedURL(l.EmbedProvider, l.EmbedID)
	case lms.LessonVideo, lms.LessonAudio, lms.LessonFile:
		v.WatchedPercent = CoveragePercent(p.Watched, l.DurationS)
		if l.FileID != 0 {
			f, err := s.Store.File(ctx, domainID, l.FileID)
			if err != nil && !lms.IsNotFound(err) {
				return LessonView{}, err
			}
			if err == nil {
				v.FileName, v.ContentType, v.FileSize = f.Name, f.ContentType, f.Size
				v.MediaURL = s.MediaURL(domainID, userID, l.ID, DefaultMediaTTL)
			}
		}
	case lms.LessonLiveClass:
		v.RecordingS = sn.learner.RecordingS[l.ID]
		v.WatchedPercent = CoveragePercent(p.Watched, v.RecordingS)
		if v.RecordingS > 0 {
			v.MediaURL = s.MediaURL(domainID, userID, l.ID, DefaultMediaTTL)
		}
		v.Sitting = pickSitting(sn.learner.Sittings[l.ClassID], l.ClassSeq, s.now())
	}
	if v.HTML == "" && l.BodyMD != "" && l.Type != lms.LessonText {
		// Other lesson types may carry an introduction.
		v.HTML = RenderMarkdown(l.BodyMD)
	}
	return v, nil
}

// pickSitting is the sitting a live-class lesson is about: the one it
// names, else the next or current one, else the last.
func pickSitting(occ []lms.Occurrence, seq int, now time.Time) lms.Occurrence {
	var last lms.Occurrence
	for _, o := range occ {
		if seq != 0 {
			if o.Seq == seq {
				return o
			}
			continue
		}
		if !o.Cancelled && o.End.After(now) {
			return o
		}
		last = o
	}
	return last
}

// progress builds the answer of a progress write from a fresh snapshot.
func (s *Service) progress(ctx context.Context, domainID, userID int64, l lms.Lesson) (Progress, error) {
	sn, err := s.load(ctx, domainID, l.CourseID, userID)
	if err != nil {
		return Progress{}, err
	}
	st := sn.result.Status[l.ID]
	p := sn.learner.Progress[l.ID]
	duration := l.DurationS
	if l.Type == lms.LessonLiveClass {
		duration = sn.learner.RecordingS[l.ID]
	}
	return Progress{LessonID: l.ID, State: st.State, CompletedAt: st.CompletedAt, Position: p.Position,
		WatchedPercent: CoveragePercent(p.Watched, duration), CoursePercent: sn.result.Percent,
		CourseCompletedAt: sn.complete.CompletedAt, NextLessonID: sn.result.Next}, nil
}

// writable checks that a learner may write progress to a lesson: enrolled
// and the lesson not locked.
func writable(sn *snapshot, l lms.Lesson) error {
	if !sn.learner.Enrolled {
		return ErrNotEnrolled
	}
	return locked(sn.result.Status[l.ID])
}

// MarkComplete is a learner's explicit "complete" on a text, file or
// embed lesson. A locked lesson is refused with ErrLocked; a lesson whose
// completion comes from watching, attendance or a test is refused as
// invalid input.
func (s *Service) MarkComplete(ctx context.Context, domainID, userID, lessonID int64) (Progress, error) {
	l, sn, err := s.lessonSnapshot(ctx, domainID, userID, lessonID)
	if err != nil {
		return Progress{}, err
	}
	switch l.Type {
	case lms.LessonText, lms.LessonFile, lms.LessonEmbed:
	default:
		return Progress{}, lms.Invalidf("lesson_id", "is a %s lesson, which completes by %s, not by a mark", l.Type, completesBy(l.Type))
	}
	if err := writable(sn, l); err != nil {
		return Progress{}, err
	}
	if err := s.mark(ctx, domainID, userID, l); err != nil {
		return Progress{}, err
	}
	return s.progress(ctx, domainID, userID, l)
}

func (s *Service) mark(ctx context.Context, domainID, userID int64, l lms.Lesson) error {
	at := s.now()
	_, err := s.Store.UpdateProgress(ctx, domainID, l, userID, func(p *lms.LessonProgress) {
		if p.OpenedAt.IsZero() {
			p.OpenedAt = at
		}
		if p.MarkedAt.IsZero() {
			p.MarkedAt = at
		}
	})
	return err
}

// completesBy names how a lesson type completes, for messages.
func completesBy(typ string) string {
	switch typ {
	case lms.LessonVideo, lms.LessonAudio:
		return "watching 90% of it"
	case lms.LessonLiveClass:
		return "attending the live class or watching its recording"
	case lms.LessonTest:
		return "passing the test"
	}
	return "an explicit mark"
}

// AdminComplete completes a lesson for an enrolled learner whatever its
// type or lock (an administrator's override). The completion is stored
// as such; a text, file or embed lesson is also marked.
func (s *Service) AdminComplete(ctx context.Context, domainID, userID, lessonID int64) (Progress, error) {
	l, sn, err := s.lessonSnapshot(ctx, domainID, userID, lessonID)
	if err != nil {
		return Progress{}, err
	}
	if !sn.learner.Enrolled {
		return Progress{}, lms.Conflictf("user %d is not enrolled in course %d", userID, l.CourseID)
	}
	if err := s.mark(ctx, domainID, userID, l); err != nil {
		return Progress{}, err
	}
	if _, err := s.Store.CompleteLesson(ctx, domainID, l, userID, s.now()); err != nil {
		return Progress{}, err
	}
	return s.progress(ctx, domainID, userID, l)
}

// Reset deletes a learner's progress and completion in a course.
func (s *Service) Reset(ctx context.Context, domainID, courseID, userID int64) error {
	if _, err := s.Store.Course(ctx, domainID, courseID); err != nil {
		return err
	}
	if _, err := s.Store.User(ctx, domainID, userID); err != nil {
		return err
	}
	_, err := s.Store.ResetProgress(ctx, domainID, courseID, userID)
	return err
}

// Watched records the second ranges a learner played of a video or audio
// lesson (or of a live-class lesson's recording) and their resume
// position. Ranges are merged with those stored; completion follows from
// the distinct seconds covered, never from the position.
func (s *Service) Watched(ctx context.Context, domainID, userID, lessonID int64, ranges [][2]int, position int) (Progress, error) {
	if len(ranges) > MaxRanges {
		return Progress{}, lms.Invalidf("ranges", "must hold at most %d ranges", MaxRanges)
	}
	for _, r := range ranges {
		if r[0] < 0 || r[1] < r[0] {
			return Progress{}, lms.Invalidf("ranges", "each range must be [start, end] seconds with 0 <= start <= end")
		}
	}
	if position < 0 {
		return Progress{}, lms.Invalidf("position", "must not be negative")
	}
	l, sn, err := s.lessonSnapshot(ctx, domainID, userID, lessonID)
	if err != nil {
		return Progress{}, err
	}
	duration := l.DurationS
	switch l.Type {
	case lms.LessonVideo, lms.LessonAudio:
	case lms.LessonLiveClass:
		duration = sn.learner.RecordingS[l.ID]
		if duration == 0 {
			return Progress{}, lms.Conflictf("lesson %d has no recording to watch yet", l.ID)
		}
	default:
		return Progress{}, lms.Invalidf("lesson_id", "is a %s lesson; only video, audio and live-class recordings report watching", l.Type)
	}
	if err := writable(sn, l); err != nil {
		return Progress{}, err
	}
	if duration > 0 {
		position = min(position, duration)
	}
	at := s.now()
	if _, err := s.Store.UpdateProgress(ctx, domainID, l, userID, func(p *lms.LessonProgress) {
		if p.OpenedAt.IsZero() {
			p.OpenedAt = at
		}
		p.Watched = MergeRanges(duration, p.Watched, ranges)
		p.Position = position
	}); err != nil {
		return Progress{}, err
	}
	return s.progress(ctx, domainID, userID, l)
}

// SetTestResult records the test engine's verdict for a learner and test,
// then completes (on a pass) or un-completes (on a fail) every test lesson
// leading into it and recomputes those courses. A course's completion,
// once set, is kept.
func (s *Service) SetTestResult(ctx context.Context, domainID, userID, testID int64, passed bool, at time.Time) error {
	if at.IsZero() {
		at = s.now()
	}
	if err := s.Store.SetTestResult(ctx, domainID, lms.TestResult{TestID: testID, UserID: userID, Passed: passed, At: at.UTC()}); err != nil {
		return err
	}
	lessons, err := s.Store.LessonsByTest(ctx, domainID, testID)
	if err != nil {
		return err
	}
	courses := map[int64]bool{}
	for _, l := range lessons {
		if l.Type != lms.LessonTest {
			continue
		}
		if !passed {
			if _, err := s.Store.UncompleteLesson(ctx, domainID, l.ID, userID); err != nil {
				return err
			}
		}
		courses[l.CourseID] = true
	}
	for id := range courses {
		if _, err := s.load(ctx, domainID, id, userID); err != nil {
			return fmt.Errorf("recompute course %d: %w", id, err)
		}
	}
	return nil
}

// Dashboard lists a learner's enrolled courses with their percentage and
// where to resume.
func (s *Service) Dashboard(ctx context.Context, domainID, userID int64) (Dashboard, error) {
	if _, err := s.Store.User(ctx, domainID, userID); err != nil {
		return Dashboard{}, err
	}
	enrolled, err := s.Store.EnrolledCourses(ctx, domainID, userID)
	if err != nil {
		return Dashboard{}, err
	}
	d := Dashboard{Courses: []DashboardCourse{}}
	for _, e := range enrolled {
		sn, err := s.load(ctx, domainID, e.CourseID, userID)
		if err != nil {
			if lms.IsNotFound(err) {
				continue
			}
			return Dashboard{}, err
		}
		dc := DashboardCourse{Course: sn.course, EnrolledAt: e.EnrolledAt, Percent: sn.result.Percent,
			CompletedAt: sn.complete.CompletedAt, ResumeLessonID: sn.result.Next}
		var last lms.LessonProgress
		for _, p := range sn.learner.Progress {
			if p.UpdatedAt.After(last.UpdatedAt) || (p.UpdatedAt.Equal(last.UpdatedAt) && p.LessonID > last.LessonID) {
				last = p
			}
		}
		if last.LessonID != 0 {
			if st, ok := sn.result.Status[last.LessonID]; ok && st.State == Available {
				dc.ResumeLessonID = last.LessonID
			}
		}
		if dc.ResumeLessonID != 0 {
			dc.ResumeLessonTitle = sn.lesson(dc.ResumeLessonID).Title
			dc.ResumePosition = sn.learner.Progress[dc.ResumeLessonID].Position
		}
		d.Courses = append(d.Courses, dc)
	}
	return d, nil
}

// LessonStateOf returns one lesson's state for a learner (the media
// handler's check).
func (s *Service) LessonStateOf(ctx context.Context, domainID, userID, lessonID int64) (lms.Lesson, Status, error) {
	l, sn, err := s.lessonSnapshot(ctx, domainID, userID, lessonID)
	if err != nil {
		return l, Status{}, err
	}
	return l, sn.result.Status[l.ID], nil
}
