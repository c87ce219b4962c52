package classroomapi

import (
	"strconv"
	"sync"

	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
	"github.com/lectern-lms/lectern/internal/jsonx"
)

// recordSpace is where a request's class records keep their keys, values
// and strings (classRecord): arrays reused from one request to the next.
// A listclass page of 10 allocated 18 KB of them, a quarter of the bytes
// the request allocated and so of the garbage collection it caused. serve
// gives the space back once the answer is written, so nothing may keep a
// record past its request.
type recordSpace struct {
	kvs  []kv
	strs wire.Strings
	json []byte // the records as JSON, for a JSON answer
}

var recordSpaces = sync.Pool{New: func() any { return new(recordSpace) }}

// classRecordKeys is the number of keys of a class record, with room for
// one more.
const classRecordKeys = 38

// keptKVs is the room a space starts with and keeps between requests:
// the keys (and string values) of a default page of 10 class records. A
// larger page uses larger arrays once and lets them go.
const keptKVs = 10 * classRecordKeys

// keptJSON is the JSON a space keeps room for between requests: a default
// page of 10 class records is about 7.5 KB.
const keptJSON = 16 << 10

// reserve makes room for n class records in one array each, so that a
// page of more than 10 does not grow its arrays record by record.
func (s *recordSpace) reserve(n int) {
	n *= classRecordKeys
	makeRoom(&s.kvs, n, n)
	makeRoom(&s.strs, n, n)
}

// obj returns an empty obj with room for n keys.
func (s *recordSpace) obj(n int) obj { return carve(&s.kvs, n) }

// strings returns an empty wire.Strings with room for n values.
func (s *recordSpace) strings(n int) wire.Strings { return carve(&s.strs, n) }

// release empties the space, dropping what its arrays point to, and
// gives it back for another request.
func (s *recordSpace) release() {
	empty(&s.kvs)
	empty(&s.strs)
	if cap(s.json) > keptJSON {
		s.json = nil
	}
	s.json = s.json[:0]
	recordSpaces.Put(s)
}

// makeRoom moves *a to a new, empty array of size elements when it has
// room for fewer than n more. Slices taken from the old array keep it.
func makeRoom[S ~[]E, E any](a *S, n, size int) {
	if cap(*a)-len(*a) < n {
		*a = make(S, 0, size)
	}
}

// carve takes an empty slice with room for n elements off the end of *a,
// first moving *a to an array twice as large (at least keptKVs) when it
// has no room left.
func carve[S ~[]E, E any](a *S, n int) S {
	makeRoom(a, n, max(2*cap(*a), n, keptKVs))
	l := len(*a)
	*a = (*a)[:l+n]
	return (*a)[l : l : l+n]
}

// empty clears *a so that it points to nothing, and keeps its array for
// the next request unless it outgrew a default page.
func empty[S ~[]E, E any](a *S) {
	if cap(*a) > keptKVs {
		*a = nil
		return
	}
	clear(*a)
	*a = (*a)[:0]
}

// records returns the call's record space, taken on first use.
func (c *call) records() *recordSpace {
	if c.space == nil {
		c.space = recordSpaces.Get().(*recordSpace)
	}
	return c.space
}

// releaseRecords gives back the call's record space, if it took one.
func (c *call) releaseRecords() {
	if c.space != nil {
		c.space.release()
		c.space = nil
	}
}

// fields receives a record's fields in order (classRecord): appended to b
// as JSON, or for an XML answer put into o, its string values in strs.
// The record's keys are written as they are: they are ASCII names that
// JSON needs no escape for.
type fields struct {
	xml  bool
	b    []byte
	o    obj
	strs wire.Strings
}

// str is a string value.
func (f *fields) str(key, v string) {
	if f.xml {
		f.o = append(f.o, kv{key, f.strs.Value(v)})
		return
	}
	f.key(key)
	f.b = jsonx.AppendString(f.b, v)
}

// zoneLabel is a zone's label with its offset, "(GMT+05:30) Chennai",
// written without putting the text together first.
func (f *fields) zoneLabel(key, diff, label string) {
	if f.xml {
		f.o = append(f.o, kv{key, f.strs.Value("(GMT" + diff + ") " + label)})
		return
	}
	f.key(key)
	f.b = append(f.b, `"(GMT`...)
	f.b = jsonx.AppendEscaped(f.b, diff)
	f.b = append(f.b, ") "...)
	f.b = jsonx.AppendEscaped(f.b, label)
	f.b = append(f.b, '"')
}

// digits is n as a string of its digits.
func (f *fields) digits(key string, n int64) {
	if f.xml {
		f.o = append(f.o, kv{key, f.strs.Value(strconv.FormatInt(n, 10))})
		return
	}
	f.key(key)
	f.b = append(f.b, '"')
	f.b = strconv.AppendInt(f.b, n, 10)
	f.b = append(f.b, '"')
}

// number is n as a number.
func (f *fields) number(key string, n int64) {
	if f.xml {
		f.o = append(f.o, kv{key, n})
		return
	}
	f.key(key)
	f.b = strconv.AppendInt(f.b, n, 10)
}

// key writes a key, after a comma unless it is the record's first.
func (f *fields) key(k string) {
	if f.b[len(f.b)-1] != '{' {
		f.b = append(f.b, ',')
	}
	f.b = append(f.b, '"')
	f.b = append(f.b, k...)
	f.b = append(f.b, '"', ':')
}
