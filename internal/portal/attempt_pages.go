package portal

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/classroom/i18n"
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/learn"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quiz"
	"github.com/lectern-lms/lectern/internal/quizsvc"
)

//go:embed attempt.js
var attemptJS []byte

func (p *Portal) attemptScript(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(attemptJS)
}

// attemptHeaders are the attempt pages' security headers: the page's own
// script, no framing restrictions beyond the portal's (it may be
// embedded).
func attemptHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' https: data:; connect-src 'self'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}

const attemptCSS = `
[hidden]{display:none !important}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2433;background:#f4f6fa}
main{max-width:46rem;margin:0 auto;padding:1rem}
.card{background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12);padding:1.25rem 1.5rem;margin:0 0 1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}h2{font-size:1.1rem;margin:0 0 .5rem}
button,.button{display:inline-block;min-height:44px;min-width:44px;box-sizing:border-box;padding:.55rem 1.1rem;border-radius:8px;border:0;background:#1f5fbf;color:#fff;font:inherit;font-weight:600;text-decoration:none;cursor:pointer}
button.secondary{background:#e4e9f2;color:#1d2433}
button:focus-visible,.button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:3px solid #f5b400;outline-offset:2px}
label.opt{display:flex;gap:.6rem;align-items:center;min-height:44px;padding:.25rem .5rem;border-radius:8px;cursor:pointer}
label.opt:hover{background:#f0f3f9}
input[type=radio],input[type=checkbox]{width:1.3rem;height:1.3rem;flex:none}
input[type=text],select,textarea{font:inherit;min-height:44px;box-sizing:border-box;padding:.4rem .6rem;border:1px solid #9aa5b8;border-radius:8px;max-width:100%}
textarea{width:100%;min-height:10rem}
fieldset{border:0;margin:0;padding:0}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.bar{position:sticky;top:0;z-index:2;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;background:#1d2433;color:#fff;padding:.6rem 1rem}
.timer{font-variant-numeric:tabular-nums;font-weight:700;font-size:1.15rem}
.timer.low{color:#ffb4a8}
.status{font-size:.9rem}
.banner{padding:.75rem 1rem;border-radius:8px;margin:0 0 1rem;font-weight:600}
.banner.warn{background:#fff1c2;color:#5c4400}.banner.err{background:#ffe0db;color:#7a1708}
.match{display:grid;grid-template-columns:1fr 1fr;gap:.5rem 1rem;align-items:center}
ol.order{padding:0;list-style:none;margin:0}ol.order li{display:flex;gap:.5rem;align-items:center;padding:.35rem .5rem;border:1px solid #d6dce8;border-radius:8px;margin:0 0 .4rem;background:#fafbfd}
ol.order li span{flex:1}
.review{margin-top:.75rem;padding:.6rem .8rem;border-left:4px solid #9aa5b8;background:#f7f9fc}
.review.right{border-color:#1e8e3e}.review.wrong{border-color:#c5221f}.review.partial{border-color:#e37400}
.muted{color:#5b6577}
.meta dt{font-weight:600}.meta dd{margin:0 0 .5rem}
@media (max-width:480px){main{padding:.5rem}.card{padding:1rem}.match{grid-template-columns:1fr}}
`

var attemptFuncs = template.FuncMap{
	"t":     attemptText,
	"md":    func(s string) template.HTML { return learn.RenderMarkdown(s) },
	"deref": func(b *bool) bool { return b != nil && *b },
}

var startTmpl = template.Must(template.New("start").Funcs(attemptFuncs).Parse(`<!doctype html>
<html lang="{{.Lang}}" dir="{{.Dir}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Test.Name}}</title><style>` + attemptCSS + `</style><script src="{{.Base}}/quiz/attempt.js" defer></script></head>
<body><main>
<h1>{{.Test.Name}}</h1>
{{if .Test.Instructions}}<section class="card" aria-labelledby="ins"><h2 id="ins">{{t .Lang "learn.quiz.startTitle"}}</h2><p dir="auto" style="white-space:pre-line">{{.Test.Instructions}}</p></section>{{end}}
{{if .Resume}}<section class="card"><p><a class="button" href="{{.Base}}/attempts/{{.Resume}}">{{t .Lang "learn.quiz.resume"}}</a></p></section>{{end}}
<form class="card" method="post" action="{{.Base}}/tests/{{.Test.ID}}/attempts">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<fieldset><legend><h2>{{t .Lang "learn.quiz.mode"}}</h2></legend>
{{range .Modes}}<label class="opt"><input type="radio" name="mode" value="{{.Mode}}"{{if .Checked}} checked{{end}}{{if .Why}} disabled{{end}} aria-describedby="mode-{{.Mode}}">
<span><strong>{{.Label}}</strong><br><span id="mode-{{.Mode}}" class="muted">{{.Help}}
{{t $.Lang "learn.quiz.timeLimit"}}: {{.Limit}}.{{if .EndsAt}} <strong data-ends>{{t $.Lang "learn.quiz.endsAtClose" "time" .EndsAtText}}</strong> <time datetime="{{.EndsAt}}" hidden></time>{{end}}
{{if .Why}}<br><strong>{{.Why}}</strong>{{end}}</span></span></label>
{{end}}</fieldset>
<dl class="meta"><dt>{{t .Lang "learn.quiz.attemptsLeft"}}</dt><dd id="attempts-left">{{.Left}}</dd></dl>
<button type="submit"{{if not .CanStart}} disabled{{end}}>{{t .Lang "learn.quiz.start"}}</button>
</form>
</main></body></html>`))

type modeChoice struct {
	Mode, Label, Help, Limit, Why string
	EndsAt, EndsAtText            string
	Checked                       bool
}

// hm is a time limit in hours and minutes.
func hm(lang string, d time.Duration) string {
	h, m := int(d.Hours()), int(d.Minutes())%60
	if h > 0 {
		return attemptText(lang, "learn.quiz.hoursMinutes", "hours", h, "minutes", fmt.Sprintf("%02d", m))
	}
	return attemptText(lang, "learn.quiz.minutes", "minutes", m)
}

// testStartPage shows the start page: instructions, the modes with their
// time limits, attempts left, and the close cap before starting.
func (p *Portal) testStartPage(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	testID, ok := attemptID(r, "id")
	if !ok {
		p.notFound(w, r)
		return
	}
	acc, err := p.quiz().Access(r.Context(), l.DomainID, testID, l.UserID)
	if lms.IsNotFound(err) {
		p.notFound(w, r)
		return
	}
	if err != nil {
		p.internal(w, r, err)
		return
	}
	if !acc.Enrolled {
		// The start page is for the test's learners only: the
		// instructions and the time limits are not shown to others.
		p.notFound(w, r)
		return
	}
	now := p.now()
	data := struct {
		Lang, Dir, Base, CSRF string
		Test                  lms.Test
		Modes                 []modeChoice
		Left                  string
		Resume                int64
		CanStart              bool
	}{Lang: l.Lang, Dir: dirOf(l.Lang), Base: p.base(r), CSRF: l.CSRF, Test: acc.Test}
	for _, mode := range []string{quiz.ModeTest, quiz.ModeDemo} {
		if mode == quiz.ModeDemo && !acc.Settings.Demo.Enabled {
			continue
		}
		mc := modeChoice{Mode: mode, Label: attemptText(l.Lang, "learn.quiz.modeTest"), Help: attemptText(l.Lang, "learn.quiz.modeTestHelp"),
			Limit: attemptText(l.Lang, "learn.quiz.untimed")}
		if mode == quiz.ModeDemo {
			mc.Label, mc.Help = attemptText(l.Lang, "learn.quiz.modeDemo"), attemptText(l.Lang, "learn.quiz.modeDemoHelp")
		}
		if d := acc.TimeLimit(mode); d > 0 {
			mc.Limit = hm(l.Lang, d)
		}
		if dl, capped, ok := acc.DeadlineIf(mode, now); ok && capped {
			mc.EndsAt, mc.EndsAtText = dl.UTC().Format(time.RFC3339), dl.UTC().Format("15:04")+" UTC"
		}
		if acc.InProgress[mode] == 0 {
			mc.Why = refusalText(l.Lang, acc.Refusal(mode, now))
		} else {
			data.Resume = acc.InProgress[mode]
		}
		if mc.Why == "" && !data.CanStart {
			mc.Checked, data.CanStart = true, true
		}
		data.Modes = append(data.Modes, mc)
	}
	data.Left = attemptText(l.Lang, "learn.quiz.unlimited")
	if n := acc.Left(); n >= 0 {
		data.Left = strconv.Itoa(n)
	}
	attemptHeaders(w)
	if err := startTmpl.Execute(w, data); err != nil {
		p.logger().Error("start page", "err", err)
	}
}

func dirOf(lang string) string {
	if i18n.RTL(lang) {
		return "rtl"
	}
	return "ltr"
}

// qView is one question as the attempt page renders it.
type qView struct {
	quiz.View
	Saved      quiz.Response
	Chosen     map[string]bool
	Segments   []segment // fill_in_blanks
	Matches    map[string]string
	Items      []quiz.Option // ordering in the learner's current order
	Review     *quizsvc.SlotReview
	Pending    bool // an essay waiting for a person's mark
	ReviewWord string
	RightText  string
}

type segment struct {
	Text    string
	Blank   int // 0 = text only; n = blank n (1-based)
	Options []string
	Value   string
}

var blankRe = regexp.MustCompile(`\[\[(\d+)\]\]`)

func segments(text string, blanks []quiz.BlankView, saved []string) []segment {
	var out []segment
	last := 0
	for _, m := range blankRe.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, segment{Text: text[last:m[0]]})
		n, _ := strconv.Atoi(text[m[2]:m[3]])
		s := segment{Blank: n}
		if n-1 < len(blanks) {
			s.Options = blanks[n-1].Options
		}
		if n-1 < len(saved) {
			s.Value = saved[n-1]
		}
		out = append(out, s)
		last = m[1]
	}
	return append(out, segment{Text: text[last:]})
}

var attemptTmpl = template.Must(template.New("attempt").Funcs(attemptFuncs).Parse(`<!doctype html>
<html lang="{{.Lang}}" dir="{{.Dir}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.TestName}}</title><style>` + attemptCSS + `</style><script src="{{.Base}}/quiz/attempt.js" defer></script></head>
<body>
<div id="attempt" data-base="{{.Base}}" data-id="{{.A.ID}}" data-csrf="{{.CSRF}}" data-state="{{.A.State}}"
 data-deadline="{{if .A.Deadline}}{{.DeadlineRFC}}{{end}}" data-server-now="{{.A.ServerNowMS}}" data-seqs="{{.Seqs}}"
 data-msg-saved="{{t .Lang "learn.quiz.saved"}}" data-msg-saving="{{t .Lang "learn.quiz.saving"}}" data-msg-time-up="{{t .Lang "learn.quiz.timeUp"}}"
 data-msg-confirm="{{t .Lang "learn.quiz.submitConfirm"}}" data-msg-minutes="{{t .Lang "learn.quiz.minutesLeft"}}" data-msg-minute="{{t .Lang "learn.quiz.oneMinuteLeft"}}"
 data-msg-seconds="{{t .Lang "learn.quiz.secondsLeft"}}" data-per-page="{{.A.PerPage}}" data-navigation="{{.A.Navigation}}" data-page="{{.A.Page}}" data-pages="{{.A.Pages}}"
 data-msg-prev="{{t .Lang "learn.prev"}}" data-msg-next="{{t .Lang "learn.next"}}" data-msg-page="{{t .Lang "learn.quiz.pageOf"}}">
{{if .Open}}<div class="bar"><span>{{.TestName}}{{if eq .A.Mode "demo"}} · {{t .Lang "learn.quiz.demoBadge"}}{{end}}</span>
{{if .A.Deadline}}<span>{{t .Lang "learn.quiz.timeLeft"}}: <span id="timer" class="timer" role="timer" aria-live="off">--:--</span></span>{{end}}
<span id="save-status" class="status" aria-live="polite">{{t .Lang "learn.quiz.saved"}}</span></div>
<div id="announce" class="sr" aria-live="assertive"></div>{{end}}
<main>
<h1>{{.TestName}} — {{t .Lang "learn.quiz.attempt" "number" .A.AttemptNo}}{{if eq .A.Mode "demo"}} ({{t .Lang "learn.quiz.modeDemo"}}){{end}}</h1>
<div id="not-saved" class="banner warn" role="alert" hidden>{{t .Lang "learn.quiz.notSaved"}}</div>
<div id="time-up" class="banner err" role="alert" hidden>{{t .Lang "learn.quiz.timeUp"}}</div>
{{with .A.Review}}<section class="card" id="result" aria-labelledby="res"><h2 id="res">{{t $.Lang "learn.quiz.result"}}</h2>
{{if .Score}}<p id="score">{{t $.Lang "learn.quiz.score"}}: <strong>{{.Score}} / {{.Max}}</strong> ({{$.Percent}} %)</p>{{end}}
{{if .Passed}}<p id="passed"><strong>{{if deref .Passed}}{{t $.Lang "learn.quiz.passed"}}{{else}}{{t $.Lang "learn.quiz.failed"}}{{end}}</strong></p>{{end}}
{{if .Pending}}<p>{{t $.Lang "learn.quiz.pending"}}</p>{{end}}
{{if not .Score}}<p>{{t $.Lang "learn.quiz.noReview"}}</p>{{end}}
<p><a class="button" href="{{$.Base}}/tests/{{$.A.TestID}}">{{t $.Lang "learn.quiz.backToTest"}}</a></p></section>{{end}}
<form id="answers" onsubmit="return false" novalidate>
{{range $i, $q := .Qs}}<section class="card q" id="q{{$q.Slot}}" data-slot="{{$q.Slot}}" data-type="{{$q.Type}}" aria-labelledby="q{{$q.Slot}}-t">
<h2 id="q{{$q.Slot}}-t">{{if ne $q.Type "description"}}{{t $.Lang "learn.quiz.question" "number" $q.Slot}} <span class="muted">({{if eq $q.Points.String "1"}}{{t $.Lang "learn.quiz.onePoint"}}{{else}}{{t $.Lang "learn.quiz.points" "points" $q.Points.String}}{{end}})</span>{{end}}</h2>
{{if ne $q.Type "fill_in_blanks"}}<div class="text" id="q{{$q.Slot}}-text">{{md $q.Text}}</div>{{end}}
{{if eq $q.Type "single_choice"}}<fieldset aria-labelledby="q{{$q.Slot}}-text">{{range $q.Choices}}<label class="opt"><input type="radio" name="s{{$q.Slot}}" value="{{.ID}}"{{if index $q.Chosen .ID}} checked{{end}}{{if not $.Open}} disabled{{end}}> <span>{{.Text}}</span></label>{{end}}</fieldset>
{{else if eq $q.Type "multiple_choice"}}<fieldset aria-labelledby="q{{$q.Slot}}-text">{{range $q.Choices}}<label class="opt"><input type="checkbox" name="s{{$q.Slot}}" value="{{.ID}}"{{if index $q.Chosen .ID}} checked{{end}}{{if not $.Open}} disabled{{end}}> <span>{{.Text}}</span></label>{{end}}</fieldset>
{{else if eq $q.Type "true_false"}}<fieldset aria-labelledby="q{{$q.Slot}}-text"><label class="opt"><input type="radio" name="s{{$q.Slot}}" value="true"{{if index $q.Chosen "true"}} checked{{end}}{{if not $.Open}} disabled{{end}}> <span>{{t $.Lang "learn.quiz.true"}}</span></label><label class="opt"><input type="radio" name="s{{$q.Slot}}" value="false"{{if index $q.Chosen "false"}} checked{{end}}{{if not $.Open}} disabled{{end}}> <span>{{t $.Lang "learn.quiz.false"}}</span></label></fieldset>
{{else if eq $q.Type "short_answer"}}<label>{{t $.Lang "learn.quiz.answer"}} <input type="text" name="s{{$q.Slot}}" value="{{$q.Saved.Text}}" autocomplete="off"{{if not $.Open}} disabled{{end}}></label>
{{else if eq $q.Type "numerical"}}<label>{{t $.Lang "learn.quiz.answer"}} <input type="text" inputmode="decimal" name="s{{$q.Slot}}" value="{{$q.Saved.Value}}" autocomplete="off"{{if not $.Open}} disabled{{end}}></label>
{{else if eq $q.Type "essay"}}<label class="sr" for="e{{$q.Slot}}">{{t $.Lang "learn.quiz.answer"}}</label><textarea id="e{{$q.Slot}}" name="s{{$q.Slot}}"{{if not $.Open}} disabled{{end}}>{{$q.Saved.Text}}</textarea>
{{else if eq $q.Type "fill_in_blanks"}}<p class="text">{{range $q.Segments}}{{if .Blank}}{{if .Options}}<select data-blank="{{.Blank}}" aria-label="{{t $.Lang "learn.quiz.blank" "number" .Blank}}"{{if not $.Open}} disabled{{end}}><option value="">{{t $.Lang "learn.quiz.choose"}}</option>{{$v := .Value}}{{range .Options}}<option{{if eq . $v}} selected{{end}}>{{.}}</option>{{end}}</select>{{else}}<input type="text" data-blank="{{.Blank}}" aria-label="{{t $.Lang "learn.quiz.blank" "number" .Blank}}" value="{{.Value}}" size="12" autocomplete="off"{{if not $.Open}} disabled{{end}}>{{end}}{{else}}{{.Text}}{{end}}{{end}}</p>
{{else if eq $q.Type "matching"}}<div class="match">{{range $q.Lefts}}{{$l := .ID}}<label for="m{{$q.Slot}}-{{.ID}}">{{.Text}}</label><select id="m{{$q.Slot}}-{{.ID}}" data-left="{{.ID}}"{{if not $.Open}} disabled{{end}}><option value="">{{t $.Lang "learn.quiz.choose"}}</option>{{range $q.Rights}}<option value="{{.ID}}"{{if eq (index $q.Matches $l) .ID}} selected{{end}}>{{.Text}}</option>{{end}}</select>{{end}}</div>
{{else if eq $q.Type "ordering"}}<ol class="order" aria-labelledby="q{{$q.Slot}}-text">{{range $q.Items}}<li data-id="{{.ID}}"><span>{{.Text}}</span>{{if $.Open}}<button type="button" class="secondary" data-move="-1" aria-label="{{t $.Lang "learn.quiz.moveUp"}}: {{.Text}}">↑</button><button type="button" class="secondary" data-move="1" aria-label="{{t $.Lang "learn.quiz.moveDown"}}: {{.Text}}">↓</button>{{end}}</li>{{end}}</ol>
{{end}}
{{if ne $q.Type "description"}}{{with $q.Review}}<div class="review {{.Correct}}">{{if .Correct}}<p><strong>{{$q.ReviewWord}}</strong>{{if .Mark}} — {{.Mark}} / {{.Max}}{{end}}</p>{{else if and .Mark (not $q.Pending)}}<p>{{.Mark}} / {{.Max}}</p>{{end}}
{{if $q.RightText}}<p>{{t $.Lang "learn.quiz.rightAnswer"}}: {{$q.RightText}}</p>{{end}}
{{if .Feedback}}<p>{{t $.Lang "learn.quiz.feedback"}}: {{.Feedback}}</p>{{end}}{{if .Comment}}<p>{{t $.Lang "learn.quiz.comment"}}: {{.Comment}}</p>{{end}}{{if $q.Pending}}<p>{{t $.Lang "learn.quiz.pendingOne"}}</p>{{end}}</div>{{end}}{{end}}
</section>{{end}}
</form>
{{if .Open}}<nav id="pager" class="card" hidden aria-label="{{t .Lang "learn.quiz.pages"}}"><button type="button" class="secondary" id="prev">{{t .Lang "learn.prev"}}</button> <span id="page-no" aria-live="polite"></span> <button type="button" id="next">{{t .Lang "learn.next"}}</button></nav>{{end}}
{{if .CanSubmit}}<form id="submit-form" class="card" method="post" action="{{.Base}}/attempts/{{.A.ID}}/submit"><input type="hidden" name="csrf" value="{{.CSRF}}"><button type="submit" id="submit-button">{{t .Lang "learn.quiz.submit"}}</button></form>{{end}}
</main></div></body></html>`))

// reviewWord names a slot's review verdict ("right", "partial", "wrong").
func reviewWord(lang, correct string) string {
	switch correct {
	case "right":
		return attemptText(lang, "learn.quiz.right")
	case "partial":
		return attemptText(lang, "learn.quiz.partial")
	case "wrong":
		return attemptText(lang, "learn.quiz.wrong")
	}
	return ""
}

// rightText describes the right answer of a reviewed slot in words.
func rightText(lang string, q quiz.View, rv *quizsvc.SlotReview) string {
	if rv == nil {
		return ""
	}
	if len(rv.RightText) > 0 {
		return strings.Join(rv.RightText, "; ")
	}
	if rv.RightAnswer == nil {
		return ""
	}
	k := *rv.RightAnswer
	text := func(opts []quiz.Option, id string) string {
		for _, o := range opts {
			if o.ID == id {
				return o.Text
			}
		}
		return id
	}
	switch q.Type {
	case quiz.SingleChoice:
		return text(q.Choices, k.Choice)
	case quiz.MultipleChoice:
		var parts []string
		for _, c := range k.Choices {
			parts = append(parts, text(q.Choices, c))
		}
		return strings.Join(parts, "; ")
	case quiz.TrueFalse:
		if k.Bool != nil {
			if *k.Bool {
				return attemptText(lang, "learn.quiz.true")
			}
			return attemptText(lang, "learn.quiz.false")
		}
	case quiz.Matching:
		var parts []string
		for _, l := range q.Lefts {
			parts = append(parts, l.Text+" → "+text(q.Rights, k.Matches[l.ID]))
		}
		return strings.Join(parts, "; ")
	case quiz.Ordering:
		var parts []string
		for _, id := range k.Order {
			parts = append(parts, text(q.Items, id))
		}
		return strings.Join(parts, " → ")
	}
	return ""
}

// attemptPage serves the attempt page, or its JSON for Accept:
// application/json (questions without keys, saved answers, deadline,
// server clock, and the review the settings allow once closed).
func (p *Portal) attemptPage(w http.ResponseWriter, r *http.Request) {
	l, _ := LearnerFrom(r.Context())
	aid, ok := attemptID(r, "aid")
	if !ok {
		p.notFound(w, r)
		return
	}
	svc := p.quiz()
	v, err := svc.LearnerView(r.Context(), l.DomainID, aid, l.UserID)
	if wantsJSON(r) {
		noStore(w)
		if err != nil {
			p.attemptError(w, r, err)
			return
		}
		httpx.WriteJSON(w, http.StatusOK, v)
		return
	}
	if lms.IsNotFound(err) {
		p.notFound(w, r)
		return
	}
	if err != nil {
		p.internal(w, r, err)
		return
	}
	t, _ := p.Store.Test(r.Context(), l.DomainID, v.TestID)
	saved := map[int]quizsvc.SavedAnswer{}
	seqs := map[string]int64{}
	for _, s := range v.Answers {
		saved[s.Slot] = s
		seqs[strconv.Itoa(s.Slot)] = s.Seq
	}
	var reviews map[int]*quizsvc.SlotReview
	if v.Review != nil {
		reviews = map[int]*quizsvc.SlotReview{}
		for i := range v.Review.Slots {
			reviews[v.Review.Slots[i].Slot] = &v.Review.Slots[i]
		}
	}
	qs := make([]qView, len(v.Questions))
	for i, q := range v.Questions {
		s := saved[q.Slot].Response
		qv := qView{View: q, Saved: s, Chosen: map[string]bool{}, Matches: s.Matches, Review: reviews[q.Slot]}
		if qv.Matches == nil {
			qv.Matches = map[string]string{}
		}
		if s.Choice != "" {
			qv.Chosen[s.Choice] = true
		}
		for _, c := range s.Choices {
			qv.Chosen[c] = true
		}
		if s.Bool != nil {
			qv.Chosen[strconv.FormatBool(*s.Bool)] = true
		}
		if q.Type == quiz.FillInBlanks {
			qv.Segments = segments(q.Text, q.Blanks, s.Blanks)
		}
		qv.Items = q.Items
		if len(s.Order) == len(q.Items) {
			byID := map[string]quiz.Option{}
			for _, it := range q.Items {
				byID[it.ID] = it
			}
			qv.Items = nil
			for _, id := range s.Order {
				qv.Items = append(qv.Items, byID[id])
			}
		}
		if qv.Review != nil {
			qv.ReviewWord = reviewWord(l.Lang, qv.Review.Correct)
			qv.RightText = rightText(l.Lang, q, qv.Review)
			qv.Pending = q.Type == quiz.Essay && qv.Review.Correct == "" && v.State == quiz.NeedsGrading
		}
		qs[i] = qv
	}
	sj, _ := json.Marshal(seqs)
	data := struct {
		Lang, Dir, Base, CSRF, TestName, DeadlineRFC, Seqs, Percent string
		A                                                           quizsvc.AttemptView
		Qs                                                          []qView
		Open, CanSubmit                                             bool
	}{Lang: l.Lang, Dir: dirOf(l.Lang), Base: p.base(r), CSRF: l.CSRF, TestName: t.Name, Seqs: string(sj), A: v, Qs: qs,
		Open: v.State == quiz.InProgress, CanSubmit: v.State == quiz.InProgress || v.State == quiz.Overdue}
	if v.Deadline != nil {
		data.DeadlineRFC = v.Deadline.UTC().Format(time.RFC3339)
	}
	if v.Review != nil && v.Review.Percent != nil {
		data.Percent = strconv.FormatInt(*v.Review.Percent/100, 10) + "." + fmt.Sprintf("%02d", *v.Review.Percent%100)
	}
	attemptHeaders(w)
	if err := attemptTmpl.Execute(w, data); err != nil {
		p.logger().Error("attempt page", "err", err)
	}
}
