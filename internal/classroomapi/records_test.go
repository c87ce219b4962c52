package classroomapi

import (
	"fmt"
	"testing"
)

// Records drawn from one space never share room, stay intact when a
// later one makes the space take a new array, and a released space keeps
// nothing they pointed to.
func TestRecordSpace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reserve  int // records reserved first, 0 for none
		records  int
		keepsKVs bool // the space keeps its array when released
	}{
		{"one record", 0, 1, true},
		{"a default page", 0, 10, true},
		{"more than a page, growing", 0, 25, false},
		{"more than a page, reserved", 25, 25, false},
		{"a page, reserved", 10, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := new(recordSpace)
			if tc.reserve > 0 {
				s.reserve(tc.reserve)
			}
			var objs []obj
			for r := range tc.records {
				strs := s.strings(classRecordKeys)
				o := s.obj(classRecordKeys)
				for k := range classRecordKeys {
					o = append(o, kv{fmt.Sprint(k), strs.Value(fmt.Sprintf("%d/%d", r, k))})
				}
				objs = append(objs, o)
			}
			for r, o := range objs {
				if len(o) != classRecordKeys {
					t.Fatalf("record %d has %d keys", r, len(o))
				}
				for k, f := range o {
					if want := fmt.Sprintf("%d/%d", r, k); f.Key != fmt.Sprint(k) || *f.Value.(*string) != want {
						t.Fatalf("record %d key %d: %s = %q, want %d = %q", r, k, f.Key, *f.Value.(*string), k, want)
					}
				}
			}
			kvs, strs := s.kvs[:cap(s.kvs)], s.strs[:cap(s.strs)]
			s.release()
			if len(s.kvs) != 0 || len(s.strs) != 0 {
				t.Fatalf("released space holds %d keys and %d strings", len(s.kvs), len(s.strs))
			}
			if kept := cap(s.kvs) > 0; kept != tc.keepsKVs {
				t.Fatalf("released space keeps an array of %d keys; want kept %v", cap(s.kvs), tc.keepsKVs)
			}
			if tc.keepsKVs {
				for i := range kvs {
					if kvs[i].Key != "" || kvs[i].Value != nil || strs[i] != "" {
						t.Fatalf("released space still holds key %d: %q %v %q", i, kvs[i].Key, kvs[i].Value, strs[i])
					}
				}
			}
		})
	}
}
