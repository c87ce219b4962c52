package wire

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// xmlChar reports whether r may appear in an XML document (XML 1.0, Char).
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// xmlText is s as the XML writer can carry it: invalid UTF-8 and
// characters XML cannot hold become U+FFFD.
func xmlText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || !xmlChar(r) {
			r = '\uFFFD'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// xmlNode is a parsed element: its name, text and children.
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []xmlNode  `xml:",any"`
}

// FuzzXMLBody writes answers holding fuzzed field names and values (a
// class title, an error message) as XML and checks that every answer is
// one well-formed document, that each name became a valid element name,
// and that each value reads back as sent (with characters XML cannot carry
// replaced). The JSON of the same answer is valid JSON holding the value.
func FuzzXMLBody(f *testing.F) {
	for _, c := range []struct{ method, key, value string }{
		{"schedule", "class_id", "12"},
		{"getclass", "title", "<script>alert(1)</script>"},
		{"addclass", "Price id", "a & b ]]> \"'"},
		{"", "123", "a\x00b"},
		{"x", "", "\xff\xfeab"},
		{"é", "é", "\r\n\t\x01\x1f\uFFFE\U0010FFFF"},
		{"m", "xml:lang", "-0:00"},
		{"m", "-a", "+9:+5"},
		{"m", " a b ", "9223372036854775807:00:00"},
	} {
		f.Add(c.method, c.key, c.value, int64(2147483648))
	}
	f.Fuzz(func(t *testing.T, method, key, value string, n int64) {
		row := Obj{{key, value}, {"n", n}, {"id", WriteID(n)}}
		answers := []*Result{
			Action(method, KV{key, value}, KV{"class_id", WriteID(n)}),
			Object(method, KV{key, value}),
			Records("class", []Obj{row, row}, "", ""),
			Records("price", nil, "Price", value),
			{Kind: KindClassList, Records: []Obj{row}, Total: n},
			{Kind: KindRecords, RecordName: "discount", Records: []Obj{row}, XMLRecords: []Obj{row}, XMLGroup: "discounts", XMLGroupAttr: value},
		}
		for i, res := range answers {
			doc := XMLBody(res)
			root := parseXML(t, doc)
			if !containsText(root, xmlText(value)) {
				t.Fatalf("answer %d: %q does not hold the value %q", i, doc, value)
			}
			for _, style := range []string{StyleSeed, StyleCompat} {
				j, err := AppendJSONBody(nil, res, style)
				if err != nil || !json.Valid(j) {
					t.Fatalf("answer %d in style %s: %v %q", i, style, err, j)
				}
				if !holdsString(j, validText(value)) {
					t.Fatalf("answer %d in style %s: %s does not hold the value %q", i, style, j, value)
				}
			}
		}
		root := parseXML(t, XMLError(value, "errors"))
		if root.XMLName.Local != "rsp" || len(root.Children) != 1 || root.Children[0].Text != xmlText(value) {
			t.Fatalf("an error answer reads back as %+v, want the message %q", root, value)
		}
	})
}

// validText is s with each byte that is not UTF-8 replaced by U+FFFD, as
// encoding/json writes it.
func validText(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// holdsString reports whether JSON text j holds the string s.
func holdsString(j []byte, s string) bool {
	dec := json.NewDecoder(bytes.NewReader(j))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if str, ok := tok.(string); ok && str == s {
			return true
		}
	}
}

// parseXML reads doc as exactly one well-formed element after the XML
// declaration, with every element name valid.
func parseXML(t *testing.T, doc []byte) xmlNode {
	t.Helper()
	if !bytes.HasPrefix(doc, []byte(xml.Header)) {
		t.Fatalf("no XML declaration: %q", doc)
	}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	var root xmlNode
	if err := dec.Decode(&root); err != nil {
		t.Fatalf("not well-formed XML: %v\n%q", err, doc)
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after the root: %v\n%q", err, doc)
		}
		if cd, ok := tok.(xml.CharData); !ok || len(bytes.TrimSpace(cd)) != 0 {
			t.Fatalf("something after the root element: %#v\n%q", tok, doc)
		}
	}
	checkNames(t, root, doc)
	return root
}

func checkNames(t *testing.T, n xmlNode, doc []byte) {
	t.Helper()
	name := n.XMLName.Local
	if n.XMLName.Space != "" || name == "" || strings.ContainsAny(name, ":") {
		t.Fatalf("element name %q:%q in %q", n.XMLName.Space, name, doc)
	}
	for _, c := range n.Children {
		checkNames(t, c, doc)
	}
}

// containsText reports whether an element's text or an attribute holds s.
func containsText(n xmlNode, s string) bool {
	if n.Text == s {
		return true
	}
	for _, a := range n.Attrs {
		if a.Value == s {
			return true
		}
	}
	for _, c := range n.Children {
		if containsText(c, s) {
			return true
		}
	}
	return false
}

// FuzzEmptyJSONBody checks the classroom API's JSON body rule: an empty []
// or {} (any spacing) becomes no body; any other body labelled JSON that
// is not an object is refused; everything else is put back byte for byte.
func FuzzEmptyJSONBody(f *testing.F) {
	for _, c := range []struct{ ctype, body string }{
		{"application/json", "[]"}, {"application/json", " [ ] "}, {"application/json", "{ }"},
		{"application/json", `{"class_id":"12"}`}, {"application/json", `[1]`}, {"application/json", `"x"`},
		{"application/json", "true"}, {"application/json", "null"}, {"application/json", "12"}, {"application/json", "[\x00]"},
		{"application/json", "\xff\xfe"}, {"application/json", "{} trailing"}, {"application/vnd.api+json", "[]"},
		{"text/plain", "[]"}, {"application/x-www-form-urlencoded", "a=1"}, {"application/json; charset=utf-8", "{}"},
	} {
		f.Add(c.ctype, []byte(c.body))
	}
	const maxBody = 1024
	f.Fuzz(func(t *testing.T, ctype string, body []byte) {
		r := httptest.NewRequest("POST", "/v2/schedule", bytes.NewReader(body))
		r.Header.Set("Content-Type", ctype)
		err := EmptyJSONBody(r, maxBody)
		trimmed := bytes.TrimSpace(body)
		isJSON := IsJSONType(ctype)
		if err != nil {
			if !isJSON || len(trimmed) == 0 || trimmed[0] == '{' || len(body) > maxBody {
				t.Fatalf("refused %q (%s): %v", body, ctype, err)
			}
			if !strings.Contains(err.Error(), "must be an object") {
				t.Fatalf("the refusal does not say what is wanted: %v", err)
			}
			return
		}
		if r.Body == http.NoBody {
			var v any
			if !isJSON || json.Unmarshal(trimmed, &v) != nil {
				t.Fatalf("dropped the body %q (%s)", body, ctype)
			}
			switch v := v.(type) {
			case []any:
				if len(v) != 0 {
					t.Fatalf("dropped the array %q", body)
				}
			case map[string]any:
				if len(v) != 0 {
					t.Fatalf("dropped the object %q", body)
				}
			default:
				t.Fatalf("dropped %q", body)
			}
			return
		}
		got, _ := io.ReadAll(r.Body)
		if !bytes.Equal(got, body) {
			t.Fatalf("the body %q came back as %q", body, got)
		}
		if isJSON && len(body) <= maxBody && len(trimmed) > 0 && trimmed[0] != '{' {
			t.Fatalf("a JSON body that is not an object passed: %q", body)
		}
	})
}
