package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// refJSON is the answer writer as it was before appendJSON: every key and
// value through json.Marshal, objects in order.
func refJSON(t testing.TB, v any) []byte {
	switch v := v.(type) {
	case Obj:
		var b bytes.Buffer
		b.WriteByte('{')
		for i, f := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f.Key)
			b.Write(k)
			b.WriteByte(':')
			b.Write(refJSON(t, f.Value))
		}
		b.WriteByte('}')
		return b.Bytes()
	case []Obj:
		if v == nil {
			return []byte("null")
		}
		var b bytes.Buffer
		b.WriteByte('[')
		for i, o := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(refJSON(t, o))
		}
		b.WriteByte(']')
		return b.Bytes()
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// jsonStrings are texts with escapes, as keys and values of an answer
// (jsonx's tests cover every escape).
func jsonStrings() []string {
	return []string{"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "tab\tnl\n\x00",
		"\u2028\u2029", "é ü 中文 🎓", "bad \xff utf8"}
}

// appendJSON writes exactly what encoding/json writes for every kind of
// value an answer holds, and for anything else through json.Marshal.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	type named string
	var values []any
	for _, s := range jsonStrings() {
		values = append(values, s, Obj{{s, s}})
	}
	values = append(values, 0, -7, int64(1)<<62, WriteID(42), true, false, nil, 1.5, named("x<y"),
		map[string]int{"b": 2, "a": 1}, []string{"a", "<"}, Obj{}, []Obj{}, []Obj(nil),
		Obj{{"total", int64(3)}, {"classes", []Obj{{{"id", "1"}, {"n", 2}}, {{"nested", Obj{{"deep", []Obj{{{"x", nil}}}}}}}}}})
	for i, v := range values {
		got, err := AppendJSON(nil, v)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if want := refJSON(t, v); !bytes.Equal(got, want) {
			t.Errorf("%d %#v:\n got %s\nwant %s", i, v, got, want)
		}
	}
}

// A listclass answer of 10 classes (the default page), as the handler
// builds it.
func BenchmarkAppendJSONClassPage(b *testing.B) {
	rec := Obj{}
	for i := 0; i < 40; i++ {
		rec = append(rec, KV{"field" + strconv.Itoa(i), "value <" + strconv.Itoa(i) + ">"})
	}
	rec = append(rec, KV{"class_starts_in", int64(3600)})
	page := make([]Obj, 10)
	for i := range page {
		page[i] = rec
	}
	body := Obj{{"total", int64(100000)}, {"classes", page}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := AppendJSON(make([]byte, 0, 1024), body); err != nil {
			b.Fatal(err)
		}
	}
}

// A *string from Strings is written as the string it points to, in JSON
// and in XML, also after an append outgrew the capacity.
func TestStringsValues(t *testing.T) {
	s := make(Strings, 0, 1)
	o := Obj{{"a", s.Value("x<y")}, {"b", s.Value("two")}, {"n", int64(3)}}
	b, err := AppendJSON(nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"x\u003cy","b":"two","n":3}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	x := string(XMLBody(Records("class", []Obj{o}, "", "")))
	if !strings.Contains(x, "<class><a>x&lt;y</a><b>two</b><n>3</n></class>") {
		t.Errorf("XML %s", x)
	}
}

// TestAppendJSONBody: each kind of answer in each style, as the
// specification (seed) and the hosted service (compat) write them.
func TestAppendJSONBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		res   *Result
		style string
		want  string
	}{
		{"action seed", Action("schedule", KV{"class_id", WriteID(12)}), StyleSeed,
			`[{"status":"ok","method":"schedule","class_id":"12"}]`},
		{"action compat", Action("schedule", KV{"class_id", WriteID(12)}), StyleCompat,
			`{"status":"ok","method":"schedule","class_id":12}`},
		{"upper status and renamed id, seed", Action("addprice", KV{"price_id", WriteID(7)}, KV{"note", "a<b"}), StyleSeed,
			`[{"Status":"OK","method":"addprice","Price id":"7","note":"a\u003cb"}]`},
		{"renamed id sent under both names, compat", Action("addprice", KV{"price_id", WriteID(7)}), StyleCompat,
			`{"status":"ok","method":"addprice","price_id":7,"Price id":7}`},
		{"object without a method", Object("", KV{"plan", "basic"}, KV{"n", 3}), StyleCompat,
			`{"status":"ok","plan":"basic","n":3}`},
		{"class list written at once", &Result{Kind: KindClassList, Total: 2, RecordsJSON: RawJSON(`[{"id":"1"}]`)}, StyleSeed,
			`{"total":2,"classes":[{"id":"1"}]}`},
		{"class list of objs", &Result{Kind: KindClassList, Total: 0}, StyleCompat,
			`{"total":0,"classes":[]}`},
		{"records", Records("price", []Obj{{{"id", "1"}}}, "Price", "No Price"), StyleSeed,
			`[{"id":"1"}]`},
		{"no records", Records("price", nil, "Price", "No Price in this Class"), StyleSeed,
			`{"Price":"No Price in this Class"}`},
		{"no records, no message", Records("class", nil, "", ""), StyleCompat,
			`[]`},
	} {
		got, err := AppendJSONBody([]byte("x"), tc.res, tc.style)
		if err != nil || string(got) != "x"+tc.want {
			t.Errorf("%s: got %s (%v), want x%s", tc.name, got, err, tc.want)
		}
	}
}
