package quiz

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/internal/lms"
)

// node is a generic XML element.
type node struct {
	Name     string
	Attr     map[string]string
	Text     string
	Children []*node
}

func (n *node) all(name string) []*node {
	var out []*node
	var walk func(*node)
	walk = func(m *node) {
		for _, c := range m.Children {
			if c.Name == name {
				out = append(out, c)
			}
			walk(c)
		}
	}
	walk(n)
	return out
}

func (n *node) first(name string) *node {
	if all := n.all(name); len(all) > 0 {
		return all[0]
	}
	return nil
}

func parseXML(b []byte) (*node, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	dec.Entity = xml.HTMLEntity
	root := &node{Name: "#root"}
	stack := []*node{root}
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{Name: t.Name.Local, Attr: map[string]string{}}
			for _, a := range t.Attr {
				n.Attr[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.Children = append(top.Children, n)
			stack = append(stack, n)
			if len(stack) > 64 {
				return nil, fmt.Errorf("elements nested deeper than 64")
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top := stack[len(stack)-1]
			top.Text += string(t)
		}
	}
	return root, nil
}

var tags = regexp.MustCompile(`(?s)<[^>]*>`)

// plain turns a mattext (HTML in Canvas exports) into text.
func plain(s string) string {
	s = regexp.MustCompile(`(?i)<br\s*/?>|</p>`).ReplaceAllString(s, "\n")
	s = html.UnescapeString(tags.ReplaceAllString(s, ""))
	return strings.TrimSpace(s)
}

func matText(n *node) string {
	if n == nil {
		return ""
	}
	if m := n.first("mattext"); m != nil {
		return plain(m.Text)
	}
	return ""
}

// canvasTypes maps Canvas's question_type to Lectern's.
var canvasTypes = map[string]string{
	"multiple_choice_question":         SingleChoice,
	"true_false_question":              TrueFalse,
	"multiple_answers_question":        MultipleChoice,
	"short_answer_question":            ShortAnswer,
	"numerical_question":               Numerical,
	"matching_question":                Matching,
	"essay_question":                   Essay,
	"text_only_question":               Description,
	"fill_in_multiple_blanks_question": FillInBlanks,
	"multiple_dropdowns_question":      FillInBlanks,
}

// ParseQTI12 reads a Canvas-style QTI 1.2 file (questestinterop). Items
// of the types in canvasTypes are imported; others (calculated,
// file_upload, ...) and anything that cannot be read are reported in
// skipped with the reason. points_possible sets the points when present.
func ParseQTI12(b []byte, defaultPoints Milli) (got []Imported, skipped []Skipped, err error) {
	root, err := parseXML(b)
	if err != nil {
		return nil, nil, fmt.Errorf("the file is not well-formed XML: %v", err)
	}
	if root.first("questestinterop") == nil {
		return nil, nil, fmt.Errorf("the file has no questestinterop element: not QTI 1.2")
	}
	for i, it := range root.all("item") {
		item := "item " + strconv.Itoa(i+1)
		if t := it.Attr["title"]; t != "" {
			item += " (" + t + ")"
		} else if id := it.Attr["ident"]; id != "" {
			item += " (" + id + ")"
		}
		if i >= MaxImportItems {
			skipped = append(skipped, Skipped{item, fmt.Sprintf("the file has more than %d items", MaxImportItems)})
			continue
		}
		meta := map[string]string{}
		for _, f := range it.all("qtimetadatafield") {
			if l, e := f.first("fieldlabel"), f.first("fieldentry"); l != nil && e != nil {
				meta[strings.TrimSpace(l.Text)] = strings.TrimSpace(e.Text)
			}
		}
		ct := meta["question_type"]
		typ, ok := canvasTypes[ct]
		if !ok {
			reason := "question type " + ct + " is not supported"
			if ct == "" {
				reason = "no question_type in itemmetadata (only Canvas-style QTI 1.2 is read)"
			}
			skipped = append(skipped, Skipped{item, reason})
			continue
		}
		q, err := qtiQuestion(it, typ)
		if err != nil {
			skipped = append(skipped, Skipped{item, err.Error()})
			continue
		}
		q.Points = defaultPoints
		if p := meta["points_possible"]; p != "" {
			if strings.Contains(p, ".") {
				p = strings.TrimSuffix(strings.TrimRight(p, "0"), ".")
			}
			pts, err := ParseMilli(p)
			if err != nil {
				skipped = append(skipped, Skipped{item, "points_possible " + meta["points_possible"] + " " + err.Error()})
				continue
			}
			q.Points = pts
		}
		q.Normalize()
		var v lms.Validator
		q.Validate(&v)
		if err := v.Err(); err != nil {
			skipped = append(skipped, Skipped{item, err.Error()})
			continue
		}
		got = append(got, Imported{Item: item, Q: q})
	}
	return got, skipped, nil
}

// rightIdents are the response label idents a resprocessing sets a
// positive score for (varequal directly under conditionvar or under and).
func rightIdents(it *node) (map[string]bool, []*node) {
	right := map[string]bool{}
	var conds []*node
	for _, rc := range it.all("respcondition") {
		set := rc.first("setvar")
		if set == nil {
			continue
		}
		v := strings.TrimSpace(set.Text)
		if v == "" || strings.HasPrefix(v, "-") || strings.Trim(v, "0.") == "" {
			continue
		}
		conds = append(conds, rc)
		cv := rc.first("conditionvar")
		if cv == nil {
			continue
		}
		for _, c := range cv.Children {
			switch c.Name {
			case "varequal":
				right[strings.TrimSpace(c.Text)] = true
			case "and":
				for _, e := range c.Children {
					if e.Name == "varequal" {
						right[strings.TrimSpace(e.Text)] = true
					}
				}
			}
		}
	}
	return right, conds
}

func qtiQuestion(it *node, typ string) (Question, error) {
	pres := it.first("presentation")
	if pres == nil {
		return Question{}, fmt.Errorf("no presentation element")
	}
	var text string
	for _, c := range pres.Children {
		if c.Name == "material" {
			text = matText(c)
			break
		}
	}
	q := Question{Type: typ, Text: text}
	right, conds := rightIdents(it)
	labels := func(rl *node) []*node { return rl.all("response_label") }
	switch typ {
	case Description, Essay:
	case SingleChoice, MultipleChoice, TrueFalse:
		rl := pres.first("response_lid")
		if rl == nil {
			return q, fmt.Errorf("no response_lid element")
		}
		for _, l := range labels(rl) {
			q.Data.Choices = append(q.Data.Choices, Choice{ID: l.Attr["ident"], Text: matText(l), Correct: right[l.Attr["ident"]]})
		}
		if typ == TrueFalse {
			var correct *bool
			for _, c := range q.Data.Choices {
				if c.Correct {
					b := strings.EqualFold(strings.TrimSpace(c.Text), "true")
					correct = &b
				}
			}
			if correct == nil || len(q.Data.Choices) != 2 {
				return q, fmt.Errorf("a true/false item needs two labels and one right answer")
			}
			q.Data = Data{Correct: correct}
		}
	case ShortAnswer:
		for a := range right {
			q.Data.Answers = append(q.Data.Answers, a)
		}
		sort.Strings(q.Data.Answers)
	case Numerical:
		for _, rc := range conds {
			cv := rc.first("conditionvar")
			if eq := cv.first("varequal"); eq != nil {
				q.Data.Value = strings.TrimSpace(eq.Text)
			}
			lo, hi := cv.first("vargte"), cv.first("varlte")
			if lo != nil && hi != nil {
				l, e1 := parseDecimal(lo.Text)
				h, e2 := parseDecimal(hi.Text)
				if e1 != nil || e2 != nil {
					return q, fmt.Errorf("the numerical range is not decimal numbers")
				}
				if q.Data.Value == "" {
					mid := l.Add(l, h)
					mid.Quo(mid, big.NewRat(2, 1))
					q.Data.Value = mid.FloatString(decimals(mid))
				}
				val, _ := parseDecimal(q.Data.Value)
				tol := h.Sub(h, val)
				q.Data.Tolerance = tol.FloatString(decimals(tol))
			}
			if q.Data.Value != "" {
				break
			}
		}
		if q.Data.Value == "" {
			return q, fmt.Errorf("no exact answer or range found")
		}
	case Matching:
		for _, rl := range pres.all("response_lid") {
			byIdent := map[string]string{}
			for _, l := range labels(rl) {
				byIdent[l.Attr["ident"]] = matText(l)
			}
			left := matText(rl)
			rightText := ""
			for _, rc := range conds {
				for _, eq := range rc.all("varequal") {
					if eq.Attr["respident"] == rl.Attr["ident"] {
						rightText = byIdent[strings.TrimSpace(eq.Text)]
					}
				}
			}
			if rightText == "" {
				return q, fmt.Errorf("matching row %q has no right answer", left)
			}
			q.Data.Pairs = append(q.Data.Pairs, Pair{Left: left, Right: rightText})
		}
	case FillInBlanks:
		// Canvas writes [name] in the text and one response_lid per name.
		for i, rl := range pres.all("response_lid") {
			name := matText(rl)
			marker := "[" + name + "]"
			if !strings.Contains(q.Text, marker) {
				return q, fmt.Errorf("blank %q is not in the question text", name)
			}
			q.Text = strings.Replace(q.Text, marker, "[["+strconv.Itoa(i+1)+"]]", 1)
			var b Blank
			for _, l := range labels(rl) {
				t := matText(l)
				if right[l.Attr["ident"]] {
					b.Answers = append(b.Answers, t)
				}
				if it.first("qtimetadatafield") != nil && isDropdown(it) {
					b.Options = append(b.Options, t)
				}
			}
			q.Data.Blanks = append(q.Data.Blanks, b)
		}
	}
	return q, nil
}

func isDropdown(it *node) bool {
	for _, f := range it.all("fieldentry") {
		if strings.TrimSpace(f.Text) == "multiple_dropdowns_question" {
			return true
		}
	}
	return false
}
