package quiz

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Candidate is one question version a slot may use.
type Candidate struct {
	QuestionID int64
	VersionID  int64
	Q          Question
}

// SlotSpec is one slot of a test: a fixed question, or Count questions
// drawn at random from Pool. Points overrides the questions' own marks
// when > 0.
type SlotSpec struct {
	Fixed  *Candidate
	Pool   []Candidate
	Count  int
	Points Milli
	// Name says where a random slot draws from, for error messages.
	Name string
}

// SlotLayout is one question of an attempt as frozen at start: which
// version, its mark, and the order its options are shown in (canonical
// ids in display order). The learner sees options by display ids (c1, c2,
// ... for choices, l/r for matching, i for ordering), never by canonical
// ids, so that ids give nothing away.
type SlotLayout struct {
	Slot       int      `json:"slot"`
	QuestionID int64    `json:"question_id"`
	VersionID  int64    `json:"version_id"`
	Points     int64    `json:"points_milli"`
	Choices    []string `json:"choices,omitempty"`
	Lefts      []string `json:"lefts,omitempty"`
	Rights     []string `json:"rights,omitempty"`
	Items      []string `json:"items,omitempty"`
}

// ErrPoolTooSmall is returned by BuildLayout when a random slot cannot be
// filled.
type ErrPoolTooSmall struct {
	Name      string
	Want, Got int
}

func (e *ErrPoolTooSmall) Error() string {
	return fmt.Sprintf("the random slot from %s needs %d questions but only %d are available", e.Name, e.Want, e.Got)
}

// BuildLayout draws the random slots (never the same question twice in one
// attempt), then shuffles question order and option order as asked. rnd
// decides every draw, so a seeded rnd gives a reproducible layout.
func BuildLayout(specs []SlotSpec, qs map[int64]*Question, shuffleQuestions, shuffleAnswers bool, rnd *rand.Rand) ([]SlotLayout, error) {
	used := map[int64]bool{}
	for _, s := range specs {
		if s.Fixed != nil {
			used[s.Fixed.QuestionID] = true
		}
	}
	type pick struct {
		c      Candidate
		points Milli
	}
	var picks []pick
	for _, s := range specs {
		if s.Fixed != nil {
			picks = append(picks, pick{*s.Fixed, s.Points})
			continue
		}
		var free []Candidate
		for _, c := range s.Pool {
			if !used[c.QuestionID] {
				free = append(free, c)
			}
		}
		if len(free) < s.Count {
			return nil, &ErrPoolTooSmall{Name: s.Name, Want: s.Count, Got: len(free)}
		}
		rnd.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
		for _, c := range free[:s.Count] {
			used[c.QuestionID] = true
			picks = append(picks, pick{c, s.Points})
		}
	}
	if shuffleQuestions {
		rnd.Shuffle(len(picks), func(i, j int) { picks[i], picks[j] = picks[j], picks[i] })
	}
	out := make([]SlotLayout, len(picks))
	for i, p := range picks {
		q := p.c.Q
		qs[p.c.VersionID] = &p.c.Q
		pts := p.points
		if pts <= 0 {
			pts = q.Points
		}
		l := SlotLayout{Slot: i + 1, QuestionID: p.c.QuestionID, VersionID: p.c.VersionID, Points: int64(q.MaxMark(pts))}
		for _, c := range q.Data.Choices {
			l.Choices = append(l.Choices, c.ID)
		}
		for _, pr := range q.Data.Pairs {
			l.Lefts = append(l.Lefts, pr.ID)
			l.Rights = append(l.Rights, pr.ID)
		}
		for _, it := range q.Data.Items {
			l.Items = append(l.Items, it.ID)
		}
		shuffle := func(ids []string) {
			rnd.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		}
		if shuffleAnswers {
			shuffle(l.Choices)
			shuffle(l.Lefts)
		}
		// Matching rights and ordering items are always shuffled: shown in
		// their right order they would be the answer.
		shuffle(l.Rights)
		shuffle(l.Items)
		if len(l.Items) > 1 && equalIDs(l.Items, q.Data.Items) {
			l.Items[0], l.Items[1] = l.Items[1], l.Items[0]
		}
		out[i] = l
	}
	return out, nil
}

func equalIDs(ids []string, items []Item) bool {
	for i, it := range items {
		if ids[i] != it.ID {
			return false
		}
	}
	return true
}

func display(prefix string, canonical []string) (toDisplay, toCanonical map[string]string) {
	toDisplay, toCanonical = map[string]string{}, map[string]string{}
	for i, id := range canonical {
		d := prefix + strconv.Itoa(i+1)
		toDisplay[id], toCanonical[d] = d, id
	}
	return
}

// ToCanonical turns a response in display ids (as the browser sends it)
// into canonical ids. An unknown id is an error naming the field under
// prefix.
func (l SlotLayout) ToCanonical(prefix string, r Response) (Response, error) {
	var v lms.Validator
	_, choices := display("c", l.Choices)
	_, lefts := display("l", l.Lefts)
	_, rights := display("r", l.Rights)
	_, items := display("i", l.Items)
	conv := func(m map[string]string, id, field string) string {
		c, ok := m[id]
		if !ok {
			v.Add(prefix+"."+field, "names an option this question does not have: "+clip(id))
		}
		return c
	}
	out := r
	if r.Choice != "" {
		out.Choice = conv(choices, r.Choice, "choice")
	}
	if r.Choices != nil {
		out.Choices = make([]string, len(r.Choices))
		for i, c := range r.Choices {
			out.Choices[i] = conv(choices, c, "choices")
		}
	}
	if r.Matches != nil {
		out.Matches = map[string]string{}
		for lf, rt := range r.Matches {
			if rt == "" {
				continue
			}
			out.Matches[conv(lefts, lf, "matches")] = conv(rights, rt, "matches")
		}
	}
	if r.Order != nil {
		out.Order = make([]string, len(r.Order))
		for i, it := range r.Order {
			out.Order[i] = conv(items, it, "order")
		}
	}
	return out, v.Err()
}

// ToDisplay turns a stored (canonical) response into display ids.
func (l SlotLayout) ToDisplay(r Response) Response {
	choices, _ := display("c", l.Choices)
	lefts, _ := display("l", l.Lefts)
	rights, _ := display("r", l.Rights)
	items, _ := display("i", l.Items)
	out := r
	if r.Choice != "" {
		out.Choice = choices[r.Choice]
	}
	if r.Choices != nil {
		out.Choices = make([]string, len(r.Choices))
		for i, c := range r.Choices {
			out.Choices[i] = choices[c]
		}
	}
	if r.Matches != nil {
		out.Matches = map[string]string{}
		for lf, rt := range r.Matches {
			out.Matches[lefts[lf]] = rights[rt]
		}
	}
	if r.Order != nil {
		out.Order = make([]string, len(r.Order))
		for i, it := range r.Order {
			out.Order[i] = items[it]
		}
	}
	return out
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Option is one option as the learner sees it.
type Option struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// BlankView is one gap as the learner sees it: options for a dropdown,
// none for a text box.
type BlankView struct {
	Options []string `json:"options,omitempty"`
}

// View is a question as the learner sees it during an attempt: no key, no
// feedback, display ids only.
type View struct {
	Slot     int         `json:"slot"`
	Type     string      `json:"type"`
	Text     string      `json:"text_md"`
	Points   Milli       `json:"points"`
	Choices  []Option    `json:"choices,omitempty"`
	Blanks   []BlankView `json:"blanks,omitempty"`
	Lefts    []Option    `json:"lefts,omitempty"`
	Rights   []Option    `json:"rights,omitempty"`
	Items    []Option    `json:"items,omitempty"`
	MaxWords int         `json:"max_words,omitempty"`
}

// ViewOf renders q in the layout l for the learner.
func ViewOf(l SlotLayout, q *Question) View {
	v := View{Slot: l.Slot, Type: q.Type, Text: q.Text, Points: Milli(l.Points), MaxWords: q.Data.MaxWords}
	choice := map[string]string{}
	for _, c := range q.Data.Choices {
		choice[c.ID] = c.Text
	}
	for i, id := range l.Choices {
		v.Choices = append(v.Choices, Option{ID: "c" + strconv.Itoa(i+1), Text: choice[id]})
	}
	left, right := map[string]string{}, map[string]string{}
	for _, p := range q.Data.Pairs {
		left[p.ID], right[p.ID] = p.Left, p.Right
	}
	for i, id := range l.Lefts {
		v.Lefts = append(v.Lefts, Option{ID: "l" + strconv.Itoa(i+1), Text: left[id]})
	}
	for i, id := range l.Rights {
		v.Rights = append(v.Rights, Option{ID: "r" + strconv.Itoa(i+1), Text: right[id]})
	}
	item := map[string]string{}
	for _, it := range q.Data.Items {
		item[it.ID] = it.Text
	}
	for i, id := range l.Items {
		v.Items = append(v.Items, Option{ID: "i" + strconv.Itoa(i+1), Text: item[id]})
	}
	for _, b := range q.Data.Blanks {
		v.Blanks = append(v.Blanks, BlankView{Options: b.Options})
	}
	return v
}
