package quiz

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Question types.
const (
	SingleChoice   = "single_choice"
	TrueFalse      = "true_false"
	MultipleChoice = "multiple_choice"
	ShortAnswer    = "short_answer"
	Numerical      = "numerical"
	FillInBlanks   = "fill_in_blanks"
	Matching       = "matching"
	Ordering       = "ordering"
	Essay          = "essay"
	Description    = "description"
)

// Types lists every question type, in display order.
var Types = []string{SingleChoice, TrueFalse, MultipleChoice, ShortAnswer, Numerical, FillInBlanks, Matching,
	Ordering, Essay, Description}

// ValidType reports whether t is one of Types.
func ValidType(t string) bool {
	for _, x := range Types {
		if x == t {
			return true
		}
	}
	return false
}

// Scoring modes of multiple_choice, matching, ordering and fill_in_blanks.
const (
	Partial      = "partial"
	AllOrNothing = "all_or_nothing"
)

// Question is one version of a question: what the scorers and views need.
type Question struct {
	Type   string
	Text   string // Markdown
	Points Milli  // the default mark; a test slot may set its own
	Data   Data
}

// Data is the type-specific part of a question, stored as JSON. Each type
// uses only some fields (see docs/tests.md).
type Data struct {
	// single_choice, multiple_choice
	Choices []Choice `json:"choices,omitempty"`
	// true_false
	Correct *bool `json:"correct,omitempty"`
	// multiple_choice (partial, the default, or all_or_nothing), matching
	// and fill_in_blanks (partial by default), ordering (all_or_nothing by
	// default).
	Scoring string `json:"scoring,omitempty"`
	// short_answer: accepted answers; with Wildcard, * matches any text.
	Answers       []string `json:"answers,omitempty"`
	CaseSensitive bool     `json:"case_sensitive,omitempty"`
	Wildcard      bool     `json:"wildcard,omitempty"`
	// numerical: exact decimal value and absolute tolerance.
	Value     string `json:"value,omitempty"`
	Tolerance string `json:"tolerance,omitempty"`
	// fill_in_blanks: the text holds [[1]], [[2]], ... one per blank.
	Blanks []Blank `json:"blanks,omitempty"`
	// matching: each left goes with its right.
	Pairs []Pair `json:"pairs,omitempty"`
	// ordering: the items in their right order.
	Items []Item `json:"items,omitempty"`
	// essay: an optional word limit shown to the learner (0 = none).
	MaxWords int `json:"max_words,omitempty"`
	// Feedback is shown in review when the matrix allows feedback.
	Feedback string `json:"feedback,omitempty"`
}

// Choice is one option of a choice question. ID is stable across versions
// and is what responses name.
type Choice struct {
	ID      string `json:"id"`
	Text    string `json:"text"`
	Correct bool   `json:"correct,omitempty"`
}

// Blank is one gap of a fill_in_blanks question. With Options it is a
// dropdown (Answers must be among them); without, a text box checked like
// a short answer.
type Blank struct {
	Answers []string `json:"answers"`
	Options []string `json:"options,omitempty"`
}

// Pair is one left-right match.
type Pair struct {
	ID    string `json:"id"`
	Left  string `json:"left"`
	Right string `json:"right"`
}

// Item is one element of an ordering question.
type Item struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Limits on question size.
const (
	MaxTextLen   = 20000
	MaxOptions   = 50
	MaxOptionLen = 2000
)

var blankMark = regexp.MustCompile(`\[\[(\d+)\]\]`)

// Normalize fills what the author may leave out: choice, pair and item ids
// (1, 2, ...), scoring modes and the points of descriptions (always 0).
func (q *Question) Normalize() {
	d := &q.Data
	for i := range d.Choices {
		if strings.TrimSpace(d.Choices[i].ID) == "" {
			d.Choices[i].ID = strconv.Itoa(i + 1)
		}
	}
	for i := range d.Pairs {
		if strings.TrimSpace(d.Pairs[i].ID) == "" {
			d.Pairs[i].ID = strconv.Itoa(i + 1)
		}
	}
	for i := range d.Items {
		if strings.TrimSpace(d.Items[i].ID) == "" {
			d.Items[i].ID = strconv.Itoa(i + 1)
		}
	}
	if d.Scoring == "" {
		switch q.Type {
		case MultipleChoice, Matching, FillInBlanks:
			d.Scoring = Partial
		case Ordering:
			d.Scoring = AllOrNothing
		}
	}
	if q.Type == Description {
		q.Points = 0
	}
}

// Validate checks q (after Normalize), naming fields as the API receives
// them: type, text_md, points, data.choices, data.choices.2.text, ...
func (q *Question) Validate(v *lms.Validator) {
	if !ValidType(q.Type) {
		v.Add("type", "must be one of "+strings.Join(Types, ", "))
		return
	}
	v.Check(len(q.Text) <= MaxTextLen, "text_md", fmt.Sprintf("must be at most %d bytes", MaxTextLen))
	v.Check(strings.TrimSpace(q.Text) != "" || q.Type == Description, "text_md", "must not be blank")
	v.Check(q.Points >= 0 && q.Points <= MaxPoints, "points", "must be between 0 and 1000")
	d := q.Data
	unused := func(field string, set bool) {
		v.Check(!set, "data."+field, "is not used by "+q.Type+" questions")
	}
	if q.Type != SingleChoice && q.Type != MultipleChoice {
		unused("choices", len(d.Choices) > 0)
	}
	if q.Type != TrueFalse {
		unused("correct", d.Correct != nil)
	}
	if q.Type != ShortAnswer {
		unused("answers", len(d.Answers) > 0)
	}
	if q.Type != Numerical {
		unused("value", d.Value != "")
		unused("tolerance", d.Tolerance != "")
	}
	if q.Type != FillInBlanks {
		unused("blanks", len(d.Blanks) > 0)
	}
	if q.Type != Matching {
		unused("pairs", len(d.Pairs) > 0)
	}
	if q.Type != Ordering {
		unused("items", len(d.Items) > 0)
	}
	switch q.Type {
	case MultipleChoice, Matching, FillInBlanks, Ordering:
		v.Check(d.Scoring == Partial || d.Scoring == AllOrNothing, "data.scoring", "must be partial or all_or_nothing")
	default:
		unused("scoring", d.Scoring != "")
	}
	switch q.Type {
	case SingleChoice, MultipleChoice:
		checkChoices(v, q.Type, d.Choices)
	case TrueFalse:
		v.Check(d.Correct != nil, "data.correct", "is required: true or false")
	case ShortAnswer:
		checkStrings(v, "data.answers", d.Answers, 1)
	case Numerical:
		if _, err := parseDecimal(d.Value); err != nil {
			v.Add("data.value", err.Error())
		}
		if d.Tolerance != "" {
			t, err := parseDecimal(d.Tolerance)
			if err == nil && t.Sign() < 0 {
				err = fmt.Errorf("must not be negative")
			}
			if err != nil {
				v.Add("data.tolerance", err.Error())
			}
		}
	case FillInBlanks:
		checkBlanks(v, q.Text, d.Blanks)
	case Matching:
		v.Check(len(d.Pairs) >= 2 && len(d.Pairs) <= MaxOptions, "data.pairs", fmt.Sprintf("must have 2 to %d pairs", MaxOptions))
		ids := map[string]bool{}
		for i, p := range d.Pairs {
			f := fmt.Sprintf("data.pairs.%d", i)
			v.Check(strings.TrimSpace(p.Left) != "" && len(p.Left) <= MaxOptionLen, f+".left", "must be 1 to 2000 bytes")
			v.Check(strings.TrimSpace(p.Right) != "" && len(p.Right) <= MaxOptionLen, f+".right", "must be 1 to 2000 bytes")
			v.Check(!ids[p.ID], f+".id", "is used twice")
			ids[p.ID] = true
		}
	case Ordering:
		v.Check(len(d.Items) >= 2 && len(d.Items) <= MaxOptions, "data.items", fmt.Sprintf("must have 2 to %d items", MaxOptions))
		ids := map[string]bool{}
		for i, it := range d.Items {
			f := fmt.Sprintf("data.items.%d", i)
			v.Check(strings.TrimSpace(it.Text) != "" && len(it.Text) <= MaxOptionLen, f+".text", "must be 1 to 2000 bytes")
			v.Check(!ids[it.ID], f+".id", "is used twice")
			ids[it.ID] = true
		}
	case Essay:
		v.Check(d.MaxWords >= 0, "data.max_words", "must not be negative")
	}
	v.Check(len(d.Feedback) <= MaxTextLen, "data.feedback", fmt.Sprintf("must be at most %d bytes", MaxTextLen))
}

func checkChoices(v *lms.Validator, typ string, cs []Choice) {
	if len(cs) < 2 || len(cs) > MaxOptions {
		v.Add("data.choices", fmt.Sprintf("must have 2 to %d choices", MaxOptions))
		return
	}
	ids := map[string]bool{}
	correct := 0
	for i, c := range cs {
		f := fmt.Sprintf("data.choices.%d", i)
		v.Check(strings.TrimSpace(c.Text) != "" && len(c.Text) <= MaxOptionLen, f+".text", "must be 1 to 2000 bytes")
		v.Check(!ids[c.ID], f+".id", "is used twice")
		ids[c.ID] = true
		if c.Correct {
			correct++
		}
	}
	if typ == SingleChoice {
		v.Check(correct == 1, "data.choices", "must have exactly one correct choice")
	} else {
		v.Check(correct >= 1, "data.choices", "must have at least one correct choice")
	}
}

func checkStrings(v *lms.Validator, field string, ss []string, min int) {
	if len(ss) < min || len(ss) > MaxOptions {
		v.Add(field, fmt.Sprintf("must have %d to %d entries", min, MaxOptions))
		return
	}
	for i, s := range ss {
		v.Check(strings.TrimSpace(s) != "" && len(s) <= MaxOptionLen, fmt.Sprintf("%s.%d", field, i), "must be 1 to 2000 bytes")
	}
}

func checkBlanks(v *lms.Validator, text string, bs []Blank) {
	if len(bs) < 1 || len(bs) > MaxOptions {
		v.Add("data.blanks", fmt.Sprintf("must have 1 to %d blanks", MaxOptions))
		return
	}
	seen := map[int]bool{}
	for _, m := range blankMark.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		seen[n] = true
	}
	for i, b := range bs {
		f := fmt.Sprintf("data.blanks.%d", i)
		v.Check(seen[i+1], f, fmt.Sprintf("has no [[%d]] marker in text_md", i+1))
		checkStrings(v, f+".answers", b.Answers, 1)
		if len(b.Options) > 0 {
			checkStrings(v, f+".options", b.Options, 2)
			for _, a := range b.Answers {
				if !contains(b.Options, a) {
					v.Add(f+".answers", "must each be one of the options")
					break
				}
			}
		}
	}
	v.Check(len(seen) <= len(bs), "text_md", "has a [[n]] marker without a blank in data.blanks")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// parseDecimal reads a plain decimal number ("-3.25", "1e3" is refused) as
// an exact rational.
func parseDecimal(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	t := strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(t, ".")
	if len(s) > 40 || (whole == "" && frac == "") || (whole != "" && !digits(whole)) || (frac != "" && !digits(frac)) {
		return nil, fmt.Errorf("must be a decimal number such as 3.14")
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("must be a decimal number such as 3.14")
	}
	return r, nil
}

// MaxMark is the most a question can score in a slot worth points.
func (q *Question) MaxMark(points Milli) Milli {
	if q.Type == Description {
		return 0
	}
	return points
}

// Manual reports whether the question is marked by a person.
func (q *Question) Manual() bool { return q.Type == Essay }
