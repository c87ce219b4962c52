package classroomapi

import (
	"sync"

	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
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
}

var recordSpaces = sync.Pool{New: func() any { return new(recordSpace) }}

// classRecordKeys is the number of keys of a class record, with room for
// one more.
const classRecordKeys = 38

// keptKVs is the room a space starts with and keeps between requests:
// the keys (and string values) of a default page of 10 class records. A
// larger page uses larger arrays once and lets them go.
const keptKVs = 10 * classRecordKeys

// reserve makes room for n class records in one array each, so that a
// page of more than 10 does not grow its arrays record by record.
func (s *recordSpace) reserve(n int) {
	n *= classRecordKeys
	if cap(s.kvs)-len(s.kvs) < n {
		s.kvs = make([]kv, 0, n)
	}
	if cap(s.strs)-len(s.strs) < n {
		s.strs = make(wire.Strings, 0, n)
	}
}

// obj returns an empty obj with room for n keys.
func (s *recordSpace) obj(n int) obj {
	if cap(s.kvs)-len(s.kvs) < n {
		// Records made before keep the array they are in.
		s.kvs = make([]kv, 0, max(2*cap(s.kvs), n, keptKVs))
	}
	l := len(s.kvs)
	s.kvs = s.kvs[:l+n]
	return s.kvs[l : l : l+n]
}

// strings returns an empty wire.Strings with room for n values.
func (s *recordSpace) strings(n int) wire.Strings {
	if cap(s.strs)-len(s.strs) < n {
		s.strs = make(wire.Strings, 0, max(2*cap(s.strs), n, keptKVs))
	}
	l := len(s.strs)
	s.strs = s.strs[:l+n]
	return s.strs[l : l : l+n]
}

// release empties the space, dropping what its arrays point to, and
// gives it back for another request.
func (s *recordSpace) release() {
	if cap(s.kvs) > keptKVs {
		s.kvs = nil
	}
	if cap(s.strs) > keptKVs {
		s.strs = nil
	}
	clear(s.kvs)
	clear(s.strs)
	s.kvs, s.strs = s.kvs[:0], s.strs[:0]
	recordSpaces.Put(s)
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
