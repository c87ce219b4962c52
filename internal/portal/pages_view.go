package portal

import (
	"html/template"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
)

// What the templates show, built from the learn service's views. Texts
// that depend on the language are made here, so the templates stay plain.

type progressView struct {
	Percent int
	Label   string
}

type courseCard struct {
	ID                     int64
	Title, Subtitle, URL   string
	Progress               progressView
	Done, Started          bool
	ResumeURL, ResumeTitle string
	ResumePos              int
	ResumeClock            string
}

type testCard struct {
	ID                int64
	Name, Description string
	URL               string
}

type classCard struct {
	ID         int64
	Title      string
	Start, End template.HTML
	Live       bool
	JoinURL    string
}

type certCard struct {
	Code, Course      string
	Issued            template.HTML
	Revoked           template.HTML // "" when valid
	PDFURL, VerifyURL string
}

type homeBody struct {
	Courses      []courseCard
	Classes      []classCard
	Tests        []testCard
	Certificates []certCard
}

type lessonRow struct {
	ID        int64
	Title     string
	URL       string // "" when it cannot be opened
	State     learn.State
	StateText string
	Why       template.HTML
	Badges    []string
	Current   bool
}

type sectionRows struct {
	Title   string
	Lessons []lessonRow
}

type outlineView struct {
	Sections []sectionRows
}

type courseBody struct {
	Title, Subtitle, Highlight string
	Description, Instructor    string
	Enrolled, Started          bool
	Progress                   progressView
	Done, Total, LessonCount   int
	CompletedAt                bool
	NextURL                    string
	Outline                    outlineView
}

type liveView struct {
	Start, End    template.HTML
	Now, Upcoming bool
	JoinURL       string
}

type lessonBody struct {
	ID                     int64
	Title, Type            string
	State                  learn.State
	CourseTitle, CourseURL string
	HTML                   template.HTML
	MediaURL, WatchedURL   string
	FileName, FileSize     string
	Position               int
	WatchedPercent         int
	Embed, EmbedProvider   string
	Manual                 bool // completes by an explicit mark
	Live                   *liveView
	TestURL                string
	Enrolled               bool
	PrevURL, NextURL       string
	CompleteURL            string
	Progress               progressView
	Outline                outlineView
}

type lockedBody struct {
	ID                            int64
	Title, CourseTitle, CourseURL string
	Why                           template.HTML
	Outline                       outlineView
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func (d *pageData) courseURL(id int64) string { return d.Base + "/courses/" + itoa64(id) }

func (d *pageData) lessonURL(courseID, lessonID int64) string {
	return d.Base + "/courses/" + itoa64(courseID) + "/lessons/" + itoa64(lessonID)
}

func courseCardOf(d *pageData, c learn.DashboardCourse) courseCard {
	cc := courseCard{ID: c.Course.ID, Title: c.Course.Name, Subtitle: c.Course.Subtitle, URL: d.courseURL(c.Course.ID),
		Progress: progressView{Percent: c.Percent, Label: c.Course.Name}, Done: !c.CompletedAt.IsZero(),
		Started: c.Percent > 0 || c.ResumePosition > 0}
	if c.ResumeLessonID != 0 {
		cc.ResumeURL = d.lessonURL(c.Course.ID, c.ResumeLessonID)
		cc.ResumeTitle, cc.ResumePos, cc.ResumeClock = c.ResumeLessonTitle, c.ResumePosition, mediaClock(c.ResumePosition)
	}
	return cc
}

// stateText names a lesson's state for screen readers.
func stateText(d *pageData, st learn.State) string {
	switch st {
	case learn.Done:
		return d.S("learn.state.done")
	case learn.Locked:
		return d.S("learn.state.locked")
	}
	return d.S("learn.state.available")
}

// lockReason says why a lesson is locked and, where a date decides, until
// when.
func lockReason(d *pageData, cv learn.CourseView, st learn.Status) template.HTML {
	dated := func(key string) template.HTML {
		if st.UnlockAt.IsZero() {
			return d.T("learn.lock.generic")
		}
		return d.T(key, "date", timeHTML(st.UnlockAt, true))
	}
	switch st.Reason {
	case learn.ReasonDate, learn.ReasonEnrolmentDays:
		return dated("learn.lock.at")
	case learn.ReasonLiveClass:
		return dated("learn.lock.sitting")
	case learn.ReasonPrerequisites:
		titles := map[int64]string{}
		for _, it := range cv.Lessons() {
			titles[it.ID] = it.Title
		}
		var names []string
		for _, id := range st.After {
			if t, ok := titles[id]; ok {
				names = append(names, t)
			}
		}
		if len(names) == 0 {
			return d.T("learn.lock.generic")
		}
		return d.T("learn.lock.after", "lesson", strings.Join(names, "”, “"))
	case learn.ReasonSequential:
		return d.T("learn.lock.previous")
	case learn.ReasonNotEnrolled:
		return d.T("learn.lock.enrol")
	case learn.ReasonAccessExpired:
		return d.T("learn.lock.expired")
	}
	return d.T("learn.lock.generic")
}

// outline is the course's outline for the learner, current the lesson on
// screen (0: none). A lesson links when it can be opened: enrolled and not
// locked, or a free preview.
func (p *Portal) outline(d *pageData, cv learn.CourseView, current int64) outlineView {
	var o outlineView
	for _, s := range cv.Sections {
		sr := sectionRows{Title: s.Title}
		for _, it := range s.Lessons {
			row := lessonRow{ID: it.ID, Title: it.Title, State: it.State, StateText: stateText(d, it.State), Current: it.ID == current}
			if it.State != learn.Locked {
				row.URL = d.lessonURL(cv.Course.ID, it.ID)
			} else {
				row.Why = lockReason(d, cv, it.Status)
			}
			if !it.IsRequired {
				row.Badges = append(row.Badges, d.S("learn.optional"))
			}
			if it.IsPreview && !cv.Enrolled {
				row.Badges = append(row.Badges, d.S("learn.course.preview"))
			}
			sr.Lessons = append(sr.Lessons, row)
		}
		o.Sections = append(o.Sections, sr)
	}
	return o
}

func (p *Portal) courseBody(d *pageData, cv learn.CourseView) courseBody {
	c := cv.Course
	b := courseBody{Title: c.Name, Subtitle: c.Subtitle, Highlight: c.Highlight, Description: c.Description,
		Instructor: c.InstructorDescription, Enrolled: cv.Enrolled, Progress: progressView{Percent: cv.Percent, Label: c.Name},
		Done: cv.RequiredDone, Total: cv.RequiredTotal, LessonCount: len(cv.Lessons()), CompletedAt: !cv.CompletedAt.IsZero(),
		Started: cv.Percent > 0, Outline: p.outline(d, cv, 0)}
	if cv.NextLessonID != 0 && cv.Enrolled {
		b.NextURL = d.lessonURL(c.ID, cv.NextLessonID)
	}
	return b
}

// fileSize is n bytes for people (KB, MB: decimal units).
func fileSize(n int64) string {
	switch {
	case n <= 0:
		return ""
	case n < 1000:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1000*1000:
		return strconv.FormatInt((n+500)/1000, 10) + " KB"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
}

func (p *Portal) lessonBody(d *pageData, cv learn.CourseView, v learn.LessonView) lessonBody {
	b := lessonBody{ID: v.ID, Title: v.Title, Type: v.Type, State: v.State, CourseTitle: v.CourseTitle,
		CourseURL: d.courseURL(v.CourseID), HTML: demoteHeadings(v.HTML), MediaURL: v.MediaURL, FileName: v.FileName,
		FileSize: fileSize(v.FileSize), Position: v.Position, WatchedPercent: v.WatchedPercent, Enrolled: v.Enrolled,
		Progress: progressView{Percent: cv.Percent, Label: v.CourseTitle}, Outline: p.outline(d, cv, v.ID)}
	if b.FileName == "" {
		b.FileName = v.Title
	}
	lessonPath := d.lessonURL(v.CourseID, v.ID)
	b.WatchedURL = lessonPath + "/watched"
	switch v.Type {
	case lms.LessonText, lms.LessonFile, lms.LessonEmbed:
		b.Manual = true
	}
	if v.Type == lms.LessonEmbed {
		b.Embed, b.EmbedProvider = learn.EmbedURL(v.EmbedProvider, v.EmbedID), providerName(v.EmbedProvider)
	}
	if v.Type == lms.LessonTest && v.TestID != 0 {
		b.TestURL = d.Base + "/tests/" + itoa64(v.TestID)
	}
	if v.Type == lms.LessonLiveClass && !v.Sitting.Start.IsZero() {
		now := p.now()
		o := v.Sitting
		lv := &liveView{Start: timeHTML(o.Start, true), End: timeHTML(o.End, true),
			Now: !o.Cancelled && !now.Before(o.Start) && now.Before(o.End), Upcoming: !o.Cancelled && now.Before(o.Start)}
		if v.Enrolled && !o.Cancelled && now.Before(o.End) && !now.Before(o.Start.Add(-joinEarly)) {
			lv.JoinURL = d.Base + "/classes/" + itoa64(v.ClassID) + "/join?lesson=" + itoa64(v.ID)
		}
		b.Live = lv
	}
	if v.PrevLessonID != 0 {
		b.PrevURL = d.lessonURL(v.CourseID, v.PrevLessonID)
	}
	if v.NextLessonID != 0 {
		b.NextURL = d.lessonURL(v.CourseID, v.NextLessonID)
	}
	if b.Manual && v.Enrolled && v.State != learn.Done {
		b.CompleteURL = lessonPath + "/complete"
	}
	return b
}

var headingRE = regexp.MustCompile(`<(/?)h([1-5])([ >])`)

// demoteHeadings moves the headings of a lesson's body one level down
// (h1 becomes h2, ..., h5 becomes h6): the page's h1 is the lesson's
// title. The body comes sanitised from the learn service; this only
// renames its heading tags.
func demoteHeadings(h template.HTML) template.HTML {
	return template.HTML(headingRE.ReplaceAllStringFunc(string(h), func(m string) string {
		sub := headingRE.FindStringSubmatch(m)
		return "<" + sub[1] + "h" + string(rune(sub[2][0]+1)) + sub[3]
	}))
}

func providerName(p string) string {
	switch p {
	case lms.EmbedYouTube:
		return "YouTube"
	case lms.EmbedVimeo:
		return "Vimeo"
	}
	return p
}

func (p *Portal) dashboard(r *http.Request, d *pageData, l Learner) (homeBody, error) {
	ctx := r.Context()
	var b homeBody
	dash, err := p.Learn.Dashboard(ctx, l.DomainID, l.UserID)
	if err != nil {
		return b, err
	}
	for _, c := range dash.Courses {
		b.Courses = append(b.Courses, courseCardOf(d, c))
	}
	tests, err := p.Store.EnrolledTests(ctx, l.DomainID, l.UserID)
	if err != nil {
		return b, err
	}
	for _, t := range tests {
		b.Tests = append(b.Tests, testCard{ID: t.ID, Name: t.Name, Description: t.Description, URL: d.Base + "/tests/" + itoa64(t.ID)})
	}
	if b.Classes, err = p.classCards(r, d, l); err != nil {
		return b, err
	}
	if b.Certificates, err = p.certCards(r, d, l); err != nil {
		return b, err
	}
	return b, nil
}
