package quiz

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Response is a learner's answer to one question. Each type reads one
// field: choice (single_choice), choices (multiple_choice), bool
// (true_false), text (short_answer, essay), value (numerical), blanks
// (fill_in_blanks), matches (matching: pair id → pair id of the right
// chosen), order (ordering: item ids).
type Response struct {
	Choice  string            `json:"choice,omitempty"`
	Choices []string          `json:"choices,omitempty"`
	Bool    *bool             `json:"bool,omitempty"`
	Text    string            `json:"text,omitempty"`
	Value   string            `json:"value,omitempty"`
	Blanks  []string          `json:"blanks,omitempty"`
	Matches map[string]string `json:"matches,omitempty"`
	Order   []string          `json:"order,omitempty"`
}

// MaxResponseText is the longest text a response may carry (an essay).
const MaxResponseText = 100000

// Empty reports whether r answers nothing.
func (r Response) Empty() bool {
	return r.Choice == "" && len(r.Choices) == 0 && r.Bool == nil && strings.TrimSpace(r.Text) == "" &&
		strings.TrimSpace(r.Value) == "" && len(r.Blanks) == 0 && len(r.Matches) == 0 && len(r.Order) == 0
}

// ValidateResponse checks that r has the shape q's type reads, with ids q
// knows, naming fields under prefix (e.g. "response"). An empty response
// is valid (it clears the answer).
func ValidateResponse(v *lms.Validator, prefix string, q *Question, r Response) {
	if r.Empty() {
		return
	}
	d := q.Data
	only := func(field string) {
		set := map[string]bool{"choice": r.Choice != "", "choices": len(r.Choices) > 0, "bool": r.Bool != nil,
			"text": r.Text != "", "value": r.Value != "", "blanks": len(r.Blanks) > 0, "matches": len(r.Matches) > 0,
			"order": len(r.Order) > 0}
		for name, isSet := range set {
			if isSet && name != field {
				v.Add(prefix+"."+name, "is not read by "+q.Type+" questions (send "+prefix+"."+field+")")
			}
		}
	}
	choiceIDs := map[string]bool{}
	for _, c := range d.Choices {
		choiceIDs[c.ID] = true
	}
	switch q.Type {
	case SingleChoice:
		only("choice")
		v.Check(choiceIDs[r.Choice] || r.Choice == "", prefix+".choice", "is not a choice of this question")
	case MultipleChoice:
		only("choices")
		seen := map[string]bool{}
		for _, c := range r.Choices {
			v.Check(choiceIDs[c] && !seen[c], prefix+".choices", "must list distinct choices of this question")
			seen[c] = true
		}
	case TrueFalse:
		only("bool")
	case ShortAnswer, Essay:
		only("text")
		v.Check(len(r.Text) <= MaxResponseText, prefix+".text", fmt.Sprintf("must be at most %d bytes", MaxResponseText))
	case Numerical:
		only("value")
		if r.Value != "" {
			if _, err := parseDecimal(r.Value); err != nil {
				v.Add(prefix+".value", err.Error())
			}
		}
	case FillInBlanks:
		only("blanks")
		v.Check(len(r.Blanks) <= len(d.Blanks), prefix+".blanks", fmt.Sprintf("must have at most %d entries", len(d.Blanks)))
		for _, b := range r.Blanks {
			v.Check(len(b) <= MaxOptionLen, prefix+".blanks", "entries must be at most 2000 bytes")
		}
	case Matching:
		only("matches")
		ids := map[string]bool{}
		for _, p := range d.Pairs {
			ids[p.ID] = true
		}
		for l, rt := range r.Matches {
			v.Check(ids[l] && (ids[rt] || rt == ""), prefix+".matches", "must map pair ids of this question to pair ids")
		}
	case Ordering:
		only("order")
		ids := map[string]bool{}
		for _, it := range d.Items {
			ids[it.ID] = true
		}
		seen := map[string]bool{}
		ok := len(r.Order) == len(d.Items)
		for _, id := range r.Order {
			ok = ok && ids[id] && !seen[id]
			seen[id] = true
		}
		v.Check(ok, prefix+".order", "must list every item id of this question once")
	case Description:
		v.Add(prefix, "a description takes no answer")
	}
}

// Mark is the outcome of scoring one response.
type Mark struct {
	Points Milli
	// Pending is true when a person must mark it (essay).
	Pending bool
	// Correct is "right", "partial" or "wrong" ("" when pending or for a
	// description).
	Correct string
}

func markOf(got, max Milli) Mark {
	switch {
	case max == 0:
		return Mark{}
	case got >= max:
		return Mark{Points: max, Correct: "right"}
	case got > 0:
		return Mark{Points: got, Correct: "partial"}
	}
	return Mark{Correct: "wrong"}
}

// Score marks r against q in a slot worth max milli-points. The result is
// always within [0, max]. An essay is pending; a description scores 0.
func Score(q *Question, max Milli, r Response) Mark {
	d := q.Data
	if max < 0 {
		max = 0
	}
	switch q.Type {
	case Description:
		return Mark{}
	case Essay:
		return Mark{Pending: true}
	case SingleChoice:
		for _, c := range d.Choices {
			if c.ID == r.Choice && c.Correct {
				return markOf(max, max)
			}
		}
		return markOf(0, max)
	case TrueFalse:
		if r.Bool != nil && d.Correct != nil && *r.Bool == *d.Correct {
			return markOf(max, max)
		}
		return markOf(0, max)
	case MultipleChoice:
		return markOf(scoreMulti(d, max, r.Choices), max)
	case ShortAnswer:
		if r.Text != "" && acceptText(d.Answers, r.Text, d.CaseSensitive, d.Wildcard) {
			return markOf(max, max)
		}
		return markOf(0, max)
	case Numerical:
		if numberWithin(d.Value, d.Tolerance, r.Value) {
			return markOf(max, max)
		}
		return markOf(0, max)
	case FillInBlanks:
		right := 0
		for i, b := range d.Blanks {
			if i < len(r.Blanks) && r.Blanks[i] != "" && acceptBlank(b, r.Blanks[i]) {
				right++
			}
		}
		return markOf(partOf(d.Scoring, max, right, len(d.Blanks)), max)
	case Matching:
		right := 0
		for _, p := range d.Pairs {
			if got, ok := r.Matches[p.ID]; ok && rightOf(d.Pairs, got) == p.Right {
				right++
			}
		}
		return markOf(partOf(d.Scoring, max, right, len(d.Pairs)), max)
	case Ordering:
		right := 0
		for i, it := range d.Items {
			if i < len(r.Order) && r.Order[i] == it.ID {
				right++
			}
		}
		return markOf(partOf(d.Scoring, max, right, len(d.Items)), max)
	}
	return Mark{}
}

// rightOf is the right-hand text of the pair with id, so that two pairs
// sharing a right text both accept it.
func rightOf(ps []Pair, id string) string {
	for _, p := range ps {
		if p.ID == id {
			return p.Right
		}
	}
	return "\x00none"
}

func partOf(scoring string, max Milli, right, total int) Milli {
	if total == 0 {
		return 0
	}
	if scoring == AllOrNothing {
		if right == total {
			return max
		}
		return 0
	}
	return fraction(max, int64(right), int64(total))
}

// scoreMulti: all_or_nothing gives max only for exactly the correct set.
// partial gives each correct choice chosen +1/C and each wrong choice
// chosen −1/W (C correct, W wrong choices), floored at 0: choosing every
// choice scores 0, never a negative mark.
func scoreMulti(d Data, max Milli, chosen []string) Milli {
	pick := map[string]bool{}
	for _, c := range chosen {
		pick[c] = true
	}
	var nc, nw, sc, sw int64
	for _, c := range d.Choices {
		if c.Correct {
			nc++
			if pick[c.ID] {
				sc++
			}
		} else {
			nw++
			if pick[c.ID] {
				sw++
			}
		}
	}
	if nc == 0 {
		return 0
	}
	if d.Scoring == AllOrNothing {
		if sc == nc && sw == 0 {
			return max
		}
		return 0
	}
	if nw == 0 {
		return fraction(max, sc, nc)
	}
	return fraction(max, sc*nw-sw*nc, nc*nw)
}

var spaces = regexp.MustCompile(`\s+`)

// NormalizeText trims, collapses runs of white space to one space and,
// unless caseSensitive, folds case: how short answers are compared.
func NormalizeText(s string, caseSensitive bool) string {
	s = strings.TrimSpace(spaces.ReplaceAllString(s, " "))
	if !caseSensitive {
		s = strings.ToLower(s)
	}
	return s
}

func acceptText(answers []string, got string, caseSensitive, wildcard bool) bool {
	g := NormalizeText(got, caseSensitive)
	if g == "" || !utf8.ValidString(g) {
		return false
	}
	for _, a := range answers {
		want := NormalizeText(a, caseSensitive)
		if wildcard && strings.Contains(want, "*") {
			if wildcardMatch(want, g) {
				return true
			}
			continue
		}
		if want == g {
			return true
		}
	}
	return false
}

// wildcardMatch matches s against pattern where * stands for any text
// (possibly empty); there is no other special character.
func wildcardMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	mid := parts[1 : len(parts)-1]
	for _, p := range mid {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}

func acceptBlank(b Blank, got string) bool {
	if len(b.Options) > 0 {
		return contains(b.Answers, got)
	}
	return acceptText(b.Answers, got, false, false)
}

func numberWithin(value, tolerance, got string) bool {
	want, err := parseDecimal(value)
	if err != nil {
		return false
	}
	g, err := parseDecimal(got)
	if err != nil {
		return false
	}
	diff := g.Sub(g, want)
	diff.Abs(diff)
	if tolerance == "" {
		return diff.Sign() == 0
	}
	tol, err := parseDecimal(tolerance)
	if err != nil {
		return false
	}
	return diff.Cmp(tol) <= 0
}

// Key is the correct response of q: what review shows as the right answer
// and what the property tests score as full marks. Essays and
// descriptions have none.
func Key(q *Question) (Response, bool) {
	d := q.Data
	switch q.Type {
	case SingleChoice:
		for _, c := range d.Choices {
			if c.Correct {
				return Response{Choice: c.ID}, true
			}
		}
	case MultipleChoice:
		var r Response
		for _, c := range d.Choices {
			if c.Correct {
				r.Choices = append(r.Choices, c.ID)
			}
		}
		return r, true
	case TrueFalse:
		if d.Correct != nil {
			b := *d.Correct
			return Response{Bool: &b}, true
		}
	case ShortAnswer:
		if len(d.Answers) > 0 {
			return Response{Text: d.Answers[0]}, true
		}
	case Numerical:
		return Response{Value: d.Value}, true
	case FillInBlanks:
		var r Response
		for _, b := range d.Blanks {
			r.Blanks = append(r.Blanks, b.Answers[0])
		}
		return r, true
	case Matching:
		r := Response{Matches: map[string]string{}}
		for _, p := range d.Pairs {
			r.Matches[p.ID] = p.ID
		}
		return r, true
	case Ordering:
		var r Response
		for _, it := range d.Items {
			r.Order = append(r.Order, it.ID)
		}
		return r, true
	}
	return Response{}, false
}
