package classroomapi

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// obj is a JSON object whose keys keep their order, as the hosted service
// writes them. Values are strings, numbers, obj or []obj.
type obj []kv

type kv struct {
	Key   string
	Value any
}

// MarshalJSON writes the keys in order.
func (o obj) MarshalJSON() ([]byte, error) {
	return appendJSON(nil, o)
}

// appendJSON appends v as encoding/json writes it (HTML-escaped strings,
// compact), without reflection for what answers hold: obj, []obj,
// strings and integers; anything else goes through json.Marshal. A list
// answer is mostly strings, and json.Marshal re-read every nested obj it
// was handed (issue 13: a third of listclass's CPU).
func appendJSON(b []byte, v any) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case obj:
		b = append(b, '{')
		for i, f := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, f.Key)
			b = append(b, ':')
			if b, err = appendJSON(b, f.Value); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []obj:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, o := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSON(b, o); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return appendJSONString(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case writeID:
		return strconv.AppendInt(b, int64(v), 10), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case nil:
		return append(b, "null"...), nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}

// appendJSONString appends s as a JSON string exactly as json.Marshal
// does: <, > and & as \u003c, \u003e, \u0026, U+2028 and U+2029 escaped,
// invalid UTF-8 as \ufffd.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// get returns the value of key, or nil.
func (o obj) get(key string) any {
	for _, f := range o {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// Styles of JSON answer.
const (
	// StyleSeed is the specification's style: results wrapped in a
	// one-element array, errors [{"status":"error","error":"..."}], ids as
	// strings, labelled application/json.
	StyleSeed = "seed"
	// StyleCompat is what live clients read, and the server's default:
	// bare objects with "status":"ok", errors
	// {"status":"error","error":"..."}, ids that write operations return
	// as numbers, labelled text/html like the hosted service's answers
	// unless the request's Accept header names JSON.
	StyleCompat = "compat"
)

// writeID is an id that a write operation returns (schedule's class_id,
// addSchemes' price_id, ...): a number in the compat style, as the hosted
// service sends it, a string in the seed style. Ids inside records stay
// strings in both styles.
type writeID int64

// Headers of every classroom API answer: a browser that opens one (an
// answer labelled text/html holding a class title with <script>, say)
// never sniffs it into something else and never runs anything in it.
const (
	contentSecurityPolicy = "default-src 'none'; sandbox"
	htmlContentType       = "text/html; charset=UTF-8"
)

// answer writes one request's answer: JSON in style, or XML.
type answer struct {
	w     http.ResponseWriter
	r     *http.Request
	style string
	xml   bool
	// errElem is the XML element of an error's text.
	errElem string
}

// error writes an API error with status.
func (a *answer) error(status int, msg string) {
	if a.xml {
		a.write(status, "application/xml; charset=utf-8", xmlError(msg, a.errElem))
		return
	}
	a.json(status, jsonError(msg, a.style))
}

// result writes a successful answer.
func (a *answer) result(res *result) {
	if a.xml {
		a.write(http.StatusOK, "application/xml; charset=utf-8", xmlBody(res))
		return
	}
	a.json(http.StatusOK, jsonBody(res, a.style))
}

// json writes v as JSON. The seed style labels it application/json. The
// compat style labels it text/html; charset=UTF-8, as the hosted service's
// PHP does (clients built on php-curl-class and jQuery decode what they
// get a second time, so only that label works for them), unless the
// request's Accept header names JSON.
func (a *answer) json(status int, v any) {
	b, err := appendJSON(make([]byte, 0, 1024), v) // escapes <, > and & as \u003c, \u003e, \u0026
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"status":"error","error":"internal server error"}`)
	}
	ctype := "application/json; charset=utf-8"
	if a.style == StyleCompat && !acceptsJSON(a.r.Header.Values("Accept")) {
		ctype = htmlContentType
	}
	a.write(status, ctype, append(b, '\n'))
}

func (a *answer) write(status int, ctype string, body []byte) {
	h := a.w.Header()
	h.Set("Content-Type", ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	a.w.WriteHeader(status)
	a.w.Write(body)
}

// acceptsJSON reports whether an Accept header names JSON: application/json,
// text/json or a +json type, with a quality above zero. Wildcards do not
// name JSON.
func acceptsJSON(accept []string) bool {
	for _, line := range accept {
		for _, part := range strings.Split(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if mt != "application/json" && mt != "text/json" && !strings.HasSuffix(mt, "+json") {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

// resultKind says how a result is laid out.
type resultKind int

const (
	// kindAction is the outcome of an operation: status, method and an id
	// (schedule, removeclass, addSchemes, getclasslaunch, ...).
	kindAction resultKind = iota
	// kindRecords is a list of records (getclass, listSchemes, ...).
	kindRecords
	// kindObject is one informational object (getplan, applycoupon, ...).
	kindObject
	// kindClassList is listclass: {"total": N, "classes": [...]}.
	kindClassList
)

// result is what an operation returns; the writer turns it into JSON of
// either style or XML.
type result struct {
	kind   resultKind
	method string
	// fields of an action or object, in order (without status).
	fields obj
	// records of a list, and the XML element name of one record.
	records    []obj
	recordName string
	// xmlRecords, when set, are the records as XML names them (listdiscount
	// renames its fields).
	xmlRecords []obj
	// xmlGroup, when set, wraps the records in one element of that name
	// with xmlGroupAttr as its id attribute (listdiscount's classid).
	xmlGroup, xmlGroupAttr string
	// emptyKey and emptyMessage answer an empty list: {"Price": "No Price
	// in this Class"}.
	emptyKey, emptyMessage string
	total                  int64
}

// action builds an action result.
func action(method string, fields ...kv) *result {
	return &result{kind: kindAction, method: method, fields: obj(fields)}
}

// records builds a list result.
func records(recordName string, rs []obj, emptyKey, emptyMessage string) *result {
	return &result{kind: kindRecords, recordName: recordName, records: rs, emptyKey: emptyKey, emptyMessage: emptyMessage}
}

// object builds an informational result.
func object(method string, fields ...kv) *result {
	return &result{kind: kindObject, method: method, fields: obj(fields)}
}

// seedUpperStatus lists the methods whose answers the specification writes
// with "Status":"OK" rather than "status":"ok".
var seedUpperStatus = map[string]bool{
	"addclass": true, "updateclass": true, "addprice": true, "updateprice": true,
	"addDiscount": true, "updateDiscount": true,
}

// seedKeys renames id keys in the specification's style; the compat style
// sends both names.
var seedKeys = map[string]string{"price_id": "Price id", "discount_id": "Discount id"}

// seedIDKeyMethods are the methods whose id keys the specification renames.
var seedIDKeyMethods = map[string]bool{"addprice": true, "updateprice": true, "addDiscount": true, "updateDiscount": true}

// jsonBody renders res in style.
func jsonBody(res *result, style string) any {
	switch res.kind {
	case kindClassList:
		return obj{{"total", res.total}, {"classes", nonNil(res.records)}}
	case kindRecords:
		if len(res.records) == 0 && res.emptyKey != "" {
			return obj{{res.emptyKey, res.emptyMessage}}
		}
		return nonNil(res.records)
	}
	o := make(obj, 0, len(res.fields)+2)
	if style == StyleSeed && seedUpperStatus[res.method] {
		o = append(o, kv{"Status", "OK"})
	} else {
		o = append(o, kv{"status", "ok"})
	}
	if res.method != "" {
		o = append(o, kv{"method", res.method})
	}
	for _, f := range res.fields {
		if id, ok := f.Value.(writeID); ok {
			if style == StyleSeed {
				f.Value = strconv.FormatInt(int64(id), 10)
			} else {
				f.Value = int64(id)
			}
		}
		if alias, ok := seedKeys[f.Key]; ok && seedIDKeyMethods[res.method] {
			if style == StyleSeed {
				o = append(o, kv{alias, f.Value})
				continue
			}
			o = append(o, f, kv{alias, f.Value})
			continue
		}
		o = append(o, f)
	}
	if style == StyleSeed {
		return []obj{o}
	}
	return o
}

func nonNil(rs []obj) []obj {
	if rs == nil {
		return []obj{}
	}
	return rs
}

// jsonError renders an API error in style.
func jsonError(msg, style string) any {
	o := obj{{"status", "error"}, {"error", msg}}
	if style == StyleSeed {
		return []obj{o}
	}
	return o
}

// xmlBody renders res as XML: actions and objects as <rsp status="ok">,
// lists under an <xml> root.
func xmlBody(res *result) []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	switch res.kind {
	case kindAction, kindObject:
		b.WriteString(`<rsp status="ok">`)
		if res.method != "" {
			writeElem(&b, "method", res.method)
		}
		for _, f := range res.fields {
			writeElem(&b, f.Key, f.Value)
		}
		b.WriteString("</rsp>")
	case kindClassList:
		b.WriteString("<xml>")
		writeElem(&b, "total", res.total)
		b.WriteString("<classes>")
		for _, r := range res.records {
			writeElem(&b, "class", r)
		}
		b.WriteString("</classes></xml>")
	case kindRecords:
		b.WriteString("<xml>")
		if len(res.records) == 0 && res.emptyKey != "" {
			writeElem(&b, res.emptyKey, res.emptyMessage)
		}
		if res.xmlGroup != "" {
			b.WriteString("<" + res.xmlGroup + ` id="`)
			xml.EscapeText(&b, []byte(res.xmlGroupAttr))
			b.WriteString(`">`)
		}
		rs := res.records
		if res.xmlRecords != nil {
			rs = res.xmlRecords
		}
		for _, r := range rs {
			writeElem(&b, res.recordName, r)
		}
		if res.xmlGroup != "" {
			b.WriteString("</" + res.xmlGroup + ">")
		}
		b.WriteString("</xml>")
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// xmlError renders an API error. The specification puts the text in
// <message> for schedule and payment and in <errors> for the rest.
func xmlError(msg, element string) []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<rsp status="error">`)
	writeElem(&b, element, msg)
	b.WriteString("</rsp>\n")
	return b.Bytes()
}

// writeElem writes <name>value</name>, escaping text and making name a
// valid element name (spaces and other characters become _).
func writeElem(b *bytes.Buffer, name string, v any) {
	name = xmlName(name)
	switch v := v.(type) {
	case obj:
		b.WriteString("<" + name + ">")
		for _, f := range v {
			writeElem(b, f.Key, f.Value)
		}
		b.WriteString("</" + name + ">")
	case []obj:
		for _, o := range v {
			writeElem(b, name, o)
		}
	default:
		b.WriteString("<" + name + ">")
		var s string
		switch x := v.(type) {
		case string:
			s = x
		default:
			j, _ := json.Marshal(x)
			s = strings.Trim(string(j), `"`)
		}
		xml.EscapeText(b, []byte(s))
		b.WriteString("</" + name + ">")
	}
}

func xmlName(s string) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '.'):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "item"
	}
	return b.String()
}
