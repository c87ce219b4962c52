// Package wire holds the classroom API's wire shapes: the answers, as
// JSON in either style or as XML, and the rule for JSON request bodies.
// It imports only the standard library, jsonx and mediatype, so its fuzz
// tests build in seconds (the classroom API's own test binary links the
// live classroom's WebRTC stack).
package wire

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/internal/jsonx"
)

// Obj is a JSON object whose keys keep their order, as the hosted service
// writes them. Values are strings, numbers, Obj or []Obj.
type Obj []KV

// Strings keeps the string values of an Obj in one allocation: a string
// stored in an interface is copied to the heap on its own, a *string is
// not, and a listclass page made 35 such copies per class. Value appends v
// and returns a pointer to it, which AppendJSON and the XML writer read as
// the string. A pointer stays valid when an append outgrows the capacity
// (it points into the older array), so the capacity is only a hint.
type Strings []string

// Value appends v to s and returns a pointer to it.
func (s *Strings) Value(v string) *string {
	*s = append(*s, v)
	return &(*s)[len(*s)-1]
}

// KV is one key of an Obj and its value. It is an unnamed struct type so
// that the API's code may write KV{"class_id", id} (go vet asks for keyed
// fields in literals of another package's struct types).
type KV = struct {
	Key   string
	Value any
}

// MarshalJSON writes the keys in order.
func (o Obj) MarshalJSON() ([]byte, error) {
	return AppendJSON(nil, o)
}

// AppendJSON appends v as encoding/json writes it (HTML-escaped strings,
// compact), without reflection for what answers hold: obj, []obj,
// strings and integers; anything else goes through json.Marshal. A list
// answer is mostly strings, and json.Marshal re-read every nested obj it
// was handed (issue 13: a third of listclass's CPU).
func AppendJSON(b []byte, v any) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case Obj:
		b = append(b, '{')
		for i, f := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendString(b, f.Key)
			b = append(b, ':')
			if b, err = AppendJSON(b, f.Value); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []Obj:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, o := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = AppendJSON(b, o); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return jsonx.AppendString(b, v), nil
	case *string:
		return jsonx.AppendString(b, *v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case WriteID:
		return strconv.AppendInt(b, int64(v), 10), nil
	case RawJSON:
		return append(b, v...), nil
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

// RawJSON is a value already written as JSON, appended as it is.
type RawJSON []byte

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

// WriteID is an id that a write operation returns (schedule's class_id,
// addSchemes' price_id, ...): a number in the compat style, as the hosted
// service sends it, a string in the seed style. Ids inside records stay
// strings in both styles.
type WriteID int64

// Kind says how a result is laid out.
type Kind int

const (
	// KindAction is the outcome of an operation: status, method and an id
	// (schedule, removeclass, addSchemes, getclasslaunch, ...).
	KindAction Kind = iota
	// KindRecords is a list of records (getclass, listSchemes, ...).
	KindRecords
	// KindObject is one informational object (getplan, applycoupon, ...).
	KindObject
	// KindClassList is listclass: {"total": N, "classes": [...]}.
	KindClassList
)

// Result is what an operation returns; the writer turns it into JSON of
// either style or XML.
type Result struct {
	Kind   Kind
	Method string
	// Fields of an action or object, in order (without status).
	Fields Obj
	// Records of a list, and the XML element name of one record.
	Records    []Obj
	RecordName string
	// RecordsJSON, when set, stands for Records in a JSON answer: the
	// records as one JSON array, as the operation wrote them (getclass and
	// listclass, whose records cost a third as much written at once). An
	// XML answer still reads Records.
	RecordsJSON RawJSON
	// XMLRecords, when set, are the records as XML names them (listdiscount
	// renames its fields).
	XMLRecords []Obj
	// XMLGroup, when set, wraps the records in one element of that name
	// with XMLGroupAttr as its id attribute (listdiscount's classid).
	XMLGroup, XMLGroupAttr string
	// EmptyKey and EmptyMessage answer an empty list: {"Price": "No Price
	// in this Class"}.
	EmptyKey, EmptyMessage string
	Total                  int64
}

// Action builds an action result.
func Action(method string, fields ...KV) *Result {
	return &Result{Kind: KindAction, Method: method, Fields: Obj(fields)}
}

// Records builds a list result.
func Records(recordName string, rs []Obj, emptyKey, emptyMessage string) *Result {
	return &Result{Kind: KindRecords, RecordName: recordName, Records: rs, EmptyKey: emptyKey, EmptyMessage: emptyMessage}
}

// Object builds an informational result.
func Object(method string, fields ...KV) *Result {
	return &Result{Kind: KindObject, Method: method, Fields: Obj(fields)}
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

// AppendJSONBody appends res in style to b as JSON. An action's or an
// object's fields are written as they come, without an Obj of the answer
// (a point read's answer made three allocations for it); the records of a
// list as AppendJSON writes them, or as the operation wrote them
// (RecordsJSON).
func AppendJSONBody(b []byte, res *Result, style string) ([]byte, error) {
	switch res.Kind {
	case KindClassList:
		b = strconv.AppendInt(append(b, `{"total":`...), res.Total, 10)
		b = append(b, `,"classes":`...)
		if res.RecordsJSON != nil {
			b = append(b, res.RecordsJSON...)
		} else {
			var err error
			if b, err = AppendJSON(b, nonNil(res.Records)); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case KindRecords:
		if res.RecordsJSON != nil {
			return append(b, res.RecordsJSON...), nil
		}
		if len(res.Records) == 0 && res.EmptyKey != "" {
			return AppendJSON(b, Obj{{res.EmptyKey, res.EmptyMessage}})
		}
		return AppendJSON(b, nonNil(res.Records))
	}
	if style == StyleSeed {
		b = append(b, '[')
	}
	if style == StyleSeed && seedUpperStatus[res.Method] {
		b = append(b, `{"Status":"OK"`...)
	} else {
		b = append(b, `{"status":"ok"`...)
	}
	if res.Method != "" {
		b = jsonx.AppendString(append(b, `,"method":`...), res.Method)
	}
	var err error
	for _, f := range res.Fields {
		alias, renamed := seedKeys[f.Key]
		renamed = renamed && seedIDKeyMethods[res.Method]
		if !renamed || style != StyleSeed {
			if b, err = appendField(b, f.Key, f.Value, style); err != nil {
				return nil, err
			}
		}
		if renamed {
			if b, err = appendField(b, alias, f.Value, style); err != nil {
				return nil, err
			}
		}
	}
	b = append(b, '}')
	if style == StyleSeed {
		b = append(b, ']')
	}
	return b, nil
}

// appendField appends ,"key":value to an object being written. The seed
// style writes a WriteID as a string of digits; AppendJSON writes it as a
// number, as the compat style has it.
func appendField(b []byte, key string, value any, style string) ([]byte, error) {
	b = append(jsonx.AppendString(append(b, ','), key), ':')
	if id, ok := value.(WriteID); ok && style == StyleSeed {
		return append(strconv.AppendInt(append(b, '"'), int64(id), 10), '"'), nil
	}
	return AppendJSON(b, value)
}

func nonNil(rs []Obj) []Obj {
	if rs == nil {
		return []Obj{}
	}
	return rs
}

// JSONError renders an API error in style.
func JSONError(msg, style string) any {
	o := Obj{{"status", "error"}, {"error", msg}}
	if style == StyleSeed {
		return []Obj{o}
	}
	return o
}

// XMLBody renders res as XML: actions and objects as <rsp status="ok">,
// lists under an <xml> root.
func XMLBody(res *Result) []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	switch res.Kind {
	case KindAction, KindObject:
		b.WriteString(`<rsp status="ok">`)
		if res.Method != "" {
			writeElem(&b, "method", res.Method)
		}
		for _, f := range res.Fields {
			writeElem(&b, f.Key, f.Value)
		}
		b.WriteString("</rsp>")
	case KindClassList:
		b.WriteString("<xml>")
		writeElem(&b, "total", res.Total)
		b.WriteString("<classes>")
		for _, r := range res.Records {
			writeElem(&b, "class", r)
		}
		b.WriteString("</classes></xml>")
	case KindRecords:
		b.WriteString("<xml>")
		if len(res.Records) == 0 && res.EmptyKey != "" {
			writeElem(&b, res.EmptyKey, res.EmptyMessage)
		}
		if res.XMLGroup != "" {
			b.WriteString("<" + res.XMLGroup + ` id="`)
			xml.EscapeText(&b, []byte(res.XMLGroupAttr))
			b.WriteString(`">`)
		}
		rs := res.Records
		if res.XMLRecords != nil {
			rs = res.XMLRecords
		}
		for _, r := range rs {
			writeElem(&b, res.RecordName, r)
		}
		if res.XMLGroup != "" {
			b.WriteString("</" + res.XMLGroup + ">")
		}
		b.WriteString("</xml>")
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// XMLError renders an API error. The specification puts the text in
// <message> for schedule and payment and in <errors> for the rest.
func XMLError(msg, element string) []byte {
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
	case Obj:
		b.WriteString("<" + name + ">")
		for _, f := range v {
			writeElem(b, f.Key, f.Value)
		}
		b.WriteString("</" + name + ">")
	case []Obj:
		for _, o := range v {
			writeElem(b, name, o)
		}
	default:
		b.WriteString("<" + name + ">")
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case *string:
			s = *x
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
