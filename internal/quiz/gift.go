package quiz

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Imported is one question read from a file.
type Imported struct {
	Item     string // the item's title or position, as reported
	Category string
	Q        Question
}

// Skipped is one item an importer did not take, and why.
type Skipped struct {
	Item   string `json:"item"`
	Reason string `json:"reason"`
}

// MaxImportItems is the most items one import file may hold.
const MaxImportItems = 2000

// ParseGIFT reads Moodle GIFT text. Supported: multiple choice (one right
// answer → single_choice; weighted answers → multiple_choice), true/false,
// short answer, numerical (value and value:tolerance), matching, missing
// word (fill_in_blanks with one blank), essay ({}), description (no
// braces), $CATEGORY: lines, ::titles::, // comments, [html]/[markdown]
// format markers (dropped) and \ escapes. Everything else is reported in
// skipped with the reason; nothing is dropped silently.
func ParseGIFT(text string, defaultPoints Milli) (got []Imported, skipped []Skipped) {
	category := ""
	n := 0
	for _, block := range giftBlocks(text) {
		b := strings.TrimSpace(block)
		if b == "" {
			continue
		}
		if strings.HasPrefix(b, "$CATEGORY:") {
			category = strings.TrimSpace(strings.TrimPrefix(b, "$CATEGORY:"))
			if i := strings.LastIndex(category, "/"); i >= 0 {
				category = category[i+1:]
			}
			continue
		}
		n++
		item := "question " + strconv.Itoa(n)
		if n > MaxImportItems {
			skipped = append(skipped, Skipped{item, fmt.Sprintf("the file has more than %d questions", MaxImportItems)})
			continue
		}
		title, body := giftTitle(b)
		if title != "" {
			item += " (" + title + ")"
		}
		q, err := giftQuestion(body)
		if err != nil {
			skipped = append(skipped, Skipped{item, err.Error()})
			continue
		}
		if q.Type != Description {
			q.Points = defaultPoints
		}
		q.Normalize()
		var v lms.Validator
		q.Validate(&v)
		if err := v.Err(); err != nil {
			skipped = append(skipped, Skipped{item, err.Error()})
			continue
		}
		got = append(got, Imported{Item: item, Category: category, Q: q})
	}
	return got, skipped
}

// giftBlocks splits on blank lines outside braces, dropping // comments.
func giftBlocks(text string) []string {
	var blocks []string
	var cur strings.Builder
	depth := 0
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "//") {
			continue
		}
		if t == "" && depth == 0 {
			blocks = append(blocks, cur.String())
			cur.Reset()
			continue
		}
		if strings.HasPrefix(t, "$CATEGORY:") && depth == 0 {
			// A category line is its own block, blank lines or not.
			blocks = append(blocks, cur.String(), t)
			cur.Reset()
			continue
		}
		for i := 0; i < len(line); i++ {
			switch {
			case line[i] == '\\':
				i++
			case line[i] == '{':
				depth++
			case line[i] == '}' && depth > 0:
				depth--
			}
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	return append(blocks, cur.String())
}

func giftTitle(b string) (title, body string) {
	if strings.HasPrefix(b, "::") {
		if end := strings.Index(b[2:], "::"); end >= 0 {
			return strings.TrimSpace(b[2 : 2+end]), strings.TrimSpace(b[4+end:])
		}
	}
	return "", b
}

// unescape turns GIFT's \: \~ \= \# \{ \} \\ and \n into text.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == 'n' {
				b.WriteByte('\n')
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return strings.TrimSpace(b.String())
}

func stripFormat(s string) string {
	s = strings.TrimSpace(s)
	for _, f := range []string{"[html]", "[markdown]", "[plain]", "[moodle]"} {
		if strings.HasPrefix(strings.ToLower(s), f) {
			return strings.TrimSpace(s[len(f):])
		}
	}
	return s
}

// splitUnescaped finds the first unescaped c in s, or -1.
func indexUnescaped(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == c {
			return i
		}
	}
	return -1
}

func giftQuestion(body string) (Question, error) {
	open := indexUnescaped(body, '{')
	if open < 0 {
		return Question{Type: Description, Text: unescape(stripFormat(body))}, nil
	}
	rest := body[open+1:]
	closeAt := indexUnescaped(rest, '}')
	if closeAt < 0 {
		return Question{}, fmt.Errorf("the answer block has no closing }")
	}
	before := stripFormat(body[:open])
	answer := strings.TrimSpace(rest[:closeAt])
	after := strings.TrimSpace(rest[closeAt+1:])
	if indexUnescaped(after, '{') >= 0 {
		return Question{}, fmt.Errorf("more than one answer block (embedded answers / cloze) is not supported")
	}
	missingWord := after != ""
	text := unescape(before)
	if missingWord {
		text = unescape(before) + " [[1]] " + unescape(after)
	}
	switch {
	case answer == "":
		if missingWord {
			return Question{}, fmt.Errorf("an empty answer block inside text is not a question")
		}
		return Question{Type: Essay, Text: text}, nil
	case strings.HasPrefix(answer, "#"):
		if missingWord {
			return Question{}, fmt.Errorf("numerical missing-word questions are not supported")
		}
		return giftNumerical(text, answer[1:])
	}
	up := strings.ToUpper(stripFeedback(answer))
	switch up {
	case "T", "TRUE", "F", "FALSE":
		if missingWord {
			return Question{}, fmt.Errorf("true/false inside text is not supported")
		}
		b := up[0] == 'T'
		return Question{Type: TrueFalse, Text: text, Data: Data{Correct: &b}}, nil
	}
	parts := giftAnswers(answer)
	if len(parts) == 0 {
		return Question{}, fmt.Errorf("the answer block has no answers")
	}
	var right, wrong, weighted, arrows int
	for _, p := range parts {
		if strings.Contains(p.text, "->") {
			arrows++
		}
		if p.weight != "" {
			weighted++
		}
		if p.mark == '=' {
			right++
		} else {
			wrong++
		}
	}
	switch {
	case arrows > 0:
		if arrows != len(parts) || wrong > 0 || missingWord {
			return Question{}, fmt.Errorf("a matching question needs =left -> right on every answer")
		}
		q := Question{Type: Matching, Text: text}
		for _, p := range parts {
			l, r, _ := strings.Cut(p.raw, "->")
			q.Data.Pairs = append(q.Data.Pairs, Pair{Left: unescape(l), Right: unescape(r)})
		}
		return q, nil
	case wrong == 0 && weighted == 0:
		if missingWord {
			q := Question{Type: FillInBlanks, Text: text, Data: Data{Blanks: []Blank{{}}}}
			for _, p := range parts {
				q.Data.Blanks[0].Answers = append(q.Data.Blanks[0].Answers, p.text)
			}
			return q, nil
		}
		q := Question{Type: ShortAnswer, Text: text}
		for _, p := range parts {
			q.Data.Answers = append(q.Data.Answers, p.text)
		}
		return q, nil
	case weighted > 0:
		if missingWord {
			return Question{}, fmt.Errorf("weighted answers inside text are not supported")
		}
		q := Question{Type: MultipleChoice, Text: text}
		for _, p := range parts {
			correct := p.mark == '=' && p.weight == ""
			if p.weight != "" {
				w := strings.TrimPrefix(p.weight, "-")
				if _, err := parseDecimal(w); err != nil {
					return Question{}, fmt.Errorf("answer weight %q is not a number", p.weight)
				}
				zero := strings.Trim(w, "0.") == ""
				correct = !strings.HasPrefix(p.weight, "-") && !zero
			}
			q.Data.Choices = append(q.Data.Choices, Choice{Text: p.text, Correct: correct})
		}
		return q, nil
	case right == 1:
		if missingWord {
			q := Question{Type: FillInBlanks, Text: text, Data: Data{Blanks: []Blank{{}}}}
			for _, p := range parts {
				q.Data.Blanks[0].Options = append(q.Data.Blanks[0].Options, p.text)
				if p.mark == '=' {
					q.Data.Blanks[0].Answers = []string{p.text}
				}
			}
			return q, nil
		}
		q := Question{Type: SingleChoice, Text: text}
		for _, p := range parts {
			q.Data.Choices = append(q.Data.Choices, Choice{Text: p.text, Correct: p.mark == '='})
		}
		return q, nil
	}
	return Question{}, fmt.Errorf("a choice question needs exactly one =right answer, or %% weights for several")
}

type giftAnswer struct {
	mark   byte // '=' or '~'
	weight string
	text   string // unescaped, feedback dropped
	raw    string // escaped, feedback dropped, weight dropped
}

func stripFeedback(s string) string {
	if i := indexUnescaped(s, '#'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return strings.TrimSpace(s)
}

// giftAnswers splits "=a ~b ~%50%c#feedback" into answers.
func giftAnswers(s string) []giftAnswer {
	var out []giftAnswer
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		raw := s[start+1 : end]
		a := giftAnswer{mark: s[start]}
		raw = stripFeedback(raw)
		if strings.HasPrefix(raw, "%") {
			if j := strings.Index(raw[1:], "%"); j >= 0 {
				a.weight = raw[1 : 1+j]
				raw = raw[2+j:]
			}
		}
		a.raw = raw
		a.text = unescape(raw)
		out = append(out, a)
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == '=' || s[i] == '~' {
			if s[i] == '=' && i+1 < len(s) && s[i+1] == '>' {
				continue
			}
			if i > 0 && s[i-1] == '-' {
				continue
			}
			flush(i)
			start = i
		}
	}
	flush(len(s))
	return out
}

func giftNumerical(text, spec string) (Question, error) {
	spec = stripFeedback(spec)
	if strings.HasPrefix(spec, "=") || strings.Contains(spec, "~") {
		return Question{}, fmt.Errorf("numerical questions with several answers are not supported")
	}
	if strings.Contains(spec, "..") {
		return Question{}, fmt.Errorf("numerical ranges (min..max) are not supported; use value:tolerance")
	}
	val, tol, _ := strings.Cut(spec, ":")
	q := Question{Type: Numerical, Text: text, Data: Data{Value: strings.TrimSpace(val), Tolerance: strings.TrimSpace(tol)}}
	return q, nil
}
