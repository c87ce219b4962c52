package quiz

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"testing/quick"

	"github.com/lectern-lms/lectern/internal/lms"
)

// genQuestion makes a random valid question of type typ.
func genQuestion(r *rand.Rand, typ string) Question {
	n := 2 + r.IntN(6)
	q := Question{Type: typ, Text: "Q [[1]]", Points: Milli(1 + r.IntN(5000))}
	words := []string{"alpha", "Beta", "gamma delta", "3", "epsilon", "zeta"}
	switch typ {
	case SingleChoice, MultipleChoice:
		right := r.IntN(n)
		for i := 0; i < n; i++ {
			c := Choice{Text: "choice " + strconv.Itoa(i), Correct: i == right || (typ == MultipleChoice && r.IntN(3) == 0)}
			q.Data.Choices = append(q.Data.Choices, c)
		}
		if typ == MultipleChoice && r.IntN(2) == 0 {
			q.Data.Scoring = AllOrNothing
		}
	case TrueFalse:
		b := r.IntN(2) == 0
		q.Data.Correct = &b
	case ShortAnswer:
		for i := 0; i < 1+r.IntN(3); i++ {
			q.Data.Answers = append(q.Data.Answers, words[r.IntN(len(words))])
		}
		q.Data.Wildcard = r.IntN(2) == 0
		if q.Data.Wildcard {
			q.Data.Answers = append(q.Data.Answers, "par*s")
		}
	case Numerical:
		q.Data.Value = fmt.Sprintf("%d.%02d", r.IntN(200)-100, r.IntN(100))
		if r.IntN(2) == 0 {
			q.Data.Tolerance = fmt.Sprintf("0.%d", r.IntN(10))
		}
	case FillInBlanks:
		q.Text = ""
		for i := 0; i < n; i++ {
			q.Text += fmt.Sprintf("word [[%d]] ", i+1)
			b := Blank{Answers: []string{words[r.IntN(len(words))]}}
			if r.IntN(2) == 0 {
				b.Options = append([]string{b.Answers[0]}, "x", "y")
			}
			q.Data.Blanks = append(q.Data.Blanks, b)
		}
		if r.IntN(2) == 0 {
			q.Data.Scoring = AllOrNothing
		}
	case Matching:
		for i := 0; i < n; i++ {
			q.Data.Pairs = append(q.Data.Pairs, Pair{Left: "L" + strconv.Itoa(i), Right: "R" + strconv.Itoa(r.IntN(n))})
		}
	case Ordering:
		for i := 0; i < n; i++ {
			q.Data.Items = append(q.Data.Items, Item{Text: "item " + strconv.Itoa(i)})
		}
		if r.IntN(2) == 0 {
			q.Data.Scoring = Partial
		}
	case Essay:
	case Description:
		q.Text = "Read this."
	}
	q.Normalize()
	return q
}

// genResponse makes a random response of the shape q reads (ids of q).
func genResponse(r *rand.Rand, q *Question) Response {
	var resp Response
	d := q.Data
	switch q.Type {
	case SingleChoice:
		resp.Choice = d.Choices[r.IntN(len(d.Choices))].ID
	case MultipleChoice:
		for _, c := range d.Choices {
			if r.IntN(2) == 0 {
				resp.Choices = append(resp.Choices, c.ID)
			}
		}
	case TrueFalse:
		b := r.IntN(2) == 0
		resp.Bool = &b
	case ShortAnswer, Essay:
		resp.Text = []string{"alpha", " ALPHA ", "parts", "nope", "gamma   delta", ""}[r.IntN(6)]
	case Numerical:
		resp.Value = fmt.Sprintf("%d.%d", r.IntN(200)-100, r.IntN(1000))
	case FillInBlanks:
		for range d.Blanks {
			resp.Blanks = append(resp.Blanks, []string{"alpha", "x", "3", "", "Beta"}[r.IntN(5)])
		}
	case Matching:
		resp.Matches = map[string]string{}
		for _, p := range d.Pairs {
			if r.IntN(4) > 0 {
				resp.Matches[p.ID] = d.Pairs[r.IntN(len(d.Pairs))].ID
			}
		}
	case Ordering:
		for _, i := range r.Perm(len(d.Items)) {
			resp.Order = append(resp.Order, d.Items[i].ID)
		}
	}
	return resp
}

// TestScorerProperties: for every type, generated questions are valid,
// every random response scores within [0, max] and passes ValidateResponse,
// and the key scores exactly max.
func TestScorerProperties(t *testing.T) {
	for _, typ := range Types {
		t.Run(typ, func(t *testing.T) {
			prop := func(seed uint64) bool {
				r := rand.New(rand.NewPCG(seed, seed^0x9e37))
				q := genQuestion(r, typ)
				var v lms.Validator
				q.Validate(&v)
				if err := v.Err(); err != nil {
					t.Logf("generated question invalid: %v", err)
					return false
				}
				max := q.MaxMark(q.Points)
				for i := 0; i < 20; i++ {
					resp := genResponse(r, &q)
					if typ != Description {
						var rv lms.Validator
						ValidateResponse(&rv, "response", &q, resp)
						if err := rv.Err(); err != nil {
							t.Logf("generated response invalid: %v", err)
							return false
						}
					}
					m := Score(&q, max, resp)
					if m.Points < 0 || m.Points > max {
						t.Logf("mark %d outside [0, %d] for %+v", m.Points, max, resp)
						return false
					}
					if m != Score(&q, max, resp) {
						return false
					}
				}
				key, ok := Key(&q)
				switch typ {
				case Essay:
					return !ok && Score(&q, max, Response{Text: "x"}).Pending
				case Description:
					return !ok && Score(&q, max, Response{}).Points == 0
				}
				if m := Score(&q, max, key); !ok || m.Points != max || m.Correct != "right" {
					t.Logf("key %+v scored %+v, want %d", key, m, max)
					return false
				}
				return Score(&q, max, Response{}).Points == 0
			}
			if err := quick.Check(prop, &quick.Config{MaxCount: 300}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func bp(b bool) *bool { return &b }

func TestScoreTable(t *testing.T) {
	mc := Question{Type: MultipleChoice, Points: 1000, Data: Data{Choices: []Choice{
		{ID: "a", Correct: true}, {ID: "b", Correct: true}, {ID: "c"}, {ID: "d"}}}}
	mc.Normalize()
	mcAll := mc
	mcAll.Data.Scoring = AllOrNothing
	sa := Question{Type: ShortAnswer, Data: Data{Answers: []string{"New  York", "NYC"}}}
	saCase := Question{Type: ShortAnswer, Data: Data{Answers: []string{"pH"}, CaseSensitive: true}}
	saWild := Question{Type: ShortAnswer, Data: Data{Answers: []string{"colo*r"}, Wildcard: true}}
	saNoWild := Question{Type: ShortAnswer, Data: Data{Answers: []string{"colo*r"}}}
	num := Question{Type: Numerical, Data: Data{Value: "3.14", Tolerance: "0.01"}}
	numExact := Question{Type: Numerical, Data: Data{Value: "2"}}
	fib := Question{Type: FillInBlanks, Data: Data{Scoring: Partial, Blanks: []Blank{{Answers: []string{"Paris"}},
		{Answers: []string{"Seine"}, Options: []string{"Seine", "Loire"}}, {Answers: []string{"France"}}}}}
	match := Question{Type: Matching, Data: Data{Scoring: Partial, Pairs: []Pair{{ID: "1", Left: "a", Right: "x"},
		{ID: "2", Left: "b", Right: "x"}, {ID: "3", Left: "c", Right: "z"}}}}
	order := Question{Type: Ordering, Data: Data{Scoring: AllOrNothing, Items: []Item{{ID: "1"}, {ID: "2"}, {ID: "3"}}}}
	orderPart := order
	orderPart.Data.Scoring = Partial
	tests := []struct {
		name string
		q    *Question
		r    Response
		want Milli
	}{
		{"multi both right", &mc, Response{Choices: []string{"a", "b"}}, 1000},
		{"multi one right", &mc, Response{Choices: []string{"a"}}, 500},
		{"multi one right one wrong", &mc, Response{Choices: []string{"a", "c"}}, 0},
		{"multi everything is floored at 0", &mc, Response{Choices: []string{"a", "b", "c", "d"}}, 0},
		{"multi only wrong is 0, not negative", &mc, Response{Choices: []string{"c", "d"}}, 0},
		{"multi two right one wrong", &mc, Response{Choices: []string{"a", "b", "c"}}, 500},
		{"multi all-or-nothing partial", &mcAll, Response{Choices: []string{"a"}}, 0},
		{"multi all-or-nothing exact", &mcAll, Response{Choices: []string{"b", "a"}}, 1000},
		{"short case and spaces", &sa, Response{Text: "  new york "}, 1000},
		{"short second answer", &sa, Response{Text: "nyc"}, 1000},
		{"short wrong", &sa, Response{Text: "York"}, 0},
		{"short case sensitive", &saCase, Response{Text: "PH"}, 0},
		{"short case sensitive right", &saCase, Response{Text: "pH"}, 1000},
		{"short wildcard", &saWild, Response{Text: "Colour"}, 1000},
		{"short wildcard empty star", &saWild, Response{Text: "color"}, 1000},
		{"short wildcard wrong end", &saWild, Response{Text: "colors"}, 0},
		{"short star is literal without wildcard", &saNoWild, Response{Text: "colour"}, 0},
		{"numerical within", &num, Response{Value: "3.15"}, 1000},
		{"numerical edge", &num, Response{Value: "3.13"}, 1000},
		{"numerical outside", &num, Response{Value: "3.151"}, 0},
		{"numerical exact", &numExact, Response{Value: "2.000"}, 1000},
		{"numerical not a number", &numExact, Response{Value: "two"}, 0},
		{"blanks 2 of 3", &fib, Response{Blanks: []string{"paris", "Seine", "Spain"}}, 666},
		{"blanks dropdown exact", &fib, Response{Blanks: []string{"", "seine", ""}}, 0},
		{"matching shared right text", &match, Response{Matches: map[string]string{"1": "2", "2": "1", "3": "3"}}, 1000},
		{"matching one of three", &match, Response{Matches: map[string]string{"3": "3"}}, 333},
		{"ordering all or nothing", &order, Response{Order: []string{"1", "3", "2"}}, 0},
		{"ordering partial by position", &orderPart, Response{Order: []string{"1", "3", "2"}}, 333},
		{"true false", &Question{Type: TrueFalse, Data: Data{Correct: bp(false)}}, Response{Bool: bp(false)}, 1000},
		{"true false unanswered", &Question{Type: TrueFalse, Data: Data{Correct: bp(false)}}, Response{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Score(tc.q, 1000, tc.r); got.Points != tc.want {
				t.Fatalf("Score = %+v, want %d", got, tc.want)
			}
		})
	}
}

func TestValidateNamesFields(t *testing.T) {
	tests := []struct {
		name   string
		q      Question
		fields []string
	}{
		{"bad type", Question{Type: "poll", Text: "x"}, []string{"type"}},
		{"blank text", Question{Type: Essay}, []string{"text_md"}},
		{"single needs one right", Question{Type: SingleChoice, Text: "x", Data: Data{Choices: []Choice{{Text: "a"}, {Text: "b"}}}}, []string{"data.choices"}},
		{"choice text", Question{Type: MultipleChoice, Text: "x", Data: Data{Choices: []Choice{{Text: "a", Correct: true}, {Text: " "}}}}, []string{"data.choices.1.text"}},
		{"true_false needs correct", Question{Type: TrueFalse, Text: "x"}, []string{"data.correct"}},
		{"numerical value", Question{Type: Numerical, Text: "x", Data: Data{Value: "1e3", Tolerance: "-1"}}, []string{"data.value", "data.tolerance"}},
		{"blank marker missing", Question{Type: FillInBlanks, Text: "x [[1]]", Data: Data{Blanks: []Blank{{Answers: []string{"a"}}, {Answers: []string{"b"}}}}}, []string{"data.blanks.1"}},
		{"dropdown answer not an option", Question{Type: FillInBlanks, Text: "[[1]]", Data: Data{Blanks: []Blank{{Answers: []string{"a"}, Options: []string{"b", "c"}}}}}, []string{"data.blanks.0.answers"}},
		{"field of another type", Question{Type: Essay, Text: "x", Data: Data{Answers: []string{"a"}}}, []string{"data.answers"}},
		{"points", Question{Type: Essay, Text: "x", Points: MaxPoints + 1}, []string{"points"}},
		{"matching pairs", Question{Type: Matching, Text: "x", Data: Data{Pairs: []Pair{{Left: "a", Right: "b"}}}}, []string{"data.pairs"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.Normalize()
			var v lms.Validator
			tc.q.Validate(&v)
			for _, f := range tc.fields {
				if !v.Has(f) {
					t.Errorf("want field %s named; got %v", f, v.Err())
				}
			}
		})
	}
}

func TestValidateResponse(t *testing.T) {
	q := Question{Type: SingleChoice, Text: "x", Data: Data{Choices: []Choice{{Text: "a", Correct: true}, {Text: "b"}}}}
	q.Normalize()
	var v lms.Validator
	ValidateResponse(&v, "response", &q, Response{Choice: "9", Text: "hi"})
	if !v.Has("response.choice") || !v.Has("response.text") {
		t.Fatalf("want response.choice and response.text named, got %v", v.Err())
	}
}

func TestMilli(t *testing.T) {
	for in, want := range map[string]Milli{"1": 1000, "2.5": 2500, "0.125": 125, "10.05": 10050} {
		got, err := ParseMilli(in)
		if err != nil || got != want {
			t.Errorf("ParseMilli(%q) = %d, %v; want %d", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("String(%d) = %q, want %q", got, got.String(), in)
		}
	}
	for _, bad := range []string{"", "-1", "1.2345", "1.", ".5", "1e3", "abc"} {
		if _, err := ParseMilli(bad); err == nil {
			t.Errorf("ParseMilli(%q) accepted", bad)
		}
	}
}
