package record

import (
	"encoding/json"
	"slices"
	"strconv"
)

// EventsFile is the name of a recording's event log.
const EventsFile = "events.jsonl"

// maxPendingEvents bounds the event bytes waiting for the next flush; past
// it (the storage has stalled for a while) events are dropped.
const maxPendingEvents = 4 << 20

// eventFields marshals an event's data to the fields it adds: an object's
// own fields (but "t" and "type", which are the recorder's), or anything
// else under "data". It returns them as `,"k":v` pairs sorted by key.
func eventFields(data any) ([]byte, error) {
	if data == nil {
		return nil, nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if len(b) > 0 && b[0] == '{' {
		if err := json.Unmarshal(b, &fields); err != nil {
			return nil, err
		}
		delete(fields, "t")
		delete(fields, "type")
	} else if string(b) != "null" {
		fields = map[string]json.RawMessage{"data": b}
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []byte
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		out = append(out, ',')
		out = append(out, kb...)
		out = append(out, ':')
		out = append(out, fields[k]...)
	}
	return out, nil
}

// eventLine makes a line of the log: {"t":t,"type":kind,...fields}.
func eventLine(t int64, kind string, fields []byte) []byte {
	kb, _ := json.Marshal(kind)
	b := make([]byte, 0, 32+len(kb)+len(fields))
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, t, 10)
	b = append(b, `,"type":`...)
	b = append(b, kb...)
	b = append(b, fields...)
	return append(b, '}', '\n')
}
