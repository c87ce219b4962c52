package schedule

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// seedZoneIDs are every id of the classroom API's timezone list.
var seedZoneIDs = []int{28, 30, 72, 53, 14, 71, 13, 83, 84, 24, 61, 27, 35, 21, 86, 31, 2, 49, 54, 19, 87, 34, 1, 88,
	9, 89, 47, 25, 90, 73, 33, 62, 91, 42, 12, 41, 59, 50, 17, 46, 60, 70, 63, 65, 77, 75, 10, 4, 20, 5, 74, 64, 69,
	15, 44, 26, 6, 8, 39, 22, 94, 55, 29, 95, 45, 3, 57, 96, 51, 76, 56, 23, 67, 11, 16, 37, 7, 68, 38, 40, 52, 104,
	48, 32, 58, 18, 105}

func TestZoneTableCoversEverySeedID(t *testing.T) {
	if len(Zones()) != len(seedZoneIDs) {
		t.Errorf("table has %d zones, the list has %d", len(Zones()), len(seedZoneIDs))
	}
	for _, id := range seedZoneIDs {
		z, ok := ZoneByID(id)
		if !ok {
			t.Errorf("id %d missing", id)
			continue
		}
		if z.Loc == nil || z.Label == "" || z.IANA == "" {
			t.Errorf("id %d incomplete: %+v", id, z)
		}
		// In January or July the real offset equals the nominal one for
		// almost every zone; the exceptions are zones whose rules changed.
		jan := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
		jul := time.Date(2026, 7, 15, 12, 0, 0, 0, time.UTC)
		if z.DiffTime(jan) != z.Offset && z.DiffTime(jul) != z.Offset && !changedZones[id] {
			t.Errorf("id %d (%s): nominal %s, real %s / %s", id, z.IANA, z.Offset, z.DiffTime(jan), z.DiffTime(jul))
		}
	}
}

// changedZones are ids whose label's offset no longer matches their
// city's rules (or names a season): the real rules are used.
var changedZones = map[int]bool{83: true, 21: true, 87: true, 42: true, 29: true, 76: true}

func TestLookupZone(t *testing.T) {
	tests := []struct {
		in     string
		id     int
		iana   string
		errHas string
	}{
		{in: "38", id: 38, iana: "America/Mazatlan"},
		{in: " 28 ", id: 28, iana: "Europe/London"},
		{in: "Europe/London", id: 28, iana: "Europe/London"},
		{in: "America/Toronto", id: 0, iana: "America/Toronto"},
		{in: "UTC", id: 0, iana: "UTC"},
		{in: "999", errHas: "not a timezone id"},
		{in: "Local", errHas: "IANA"},
		{in: "Mars/Olympus", errHas: "IANA"},
		{in: "", errHas: "required"},
	}
	for _, tt := range tests {
		z, err := LookupZone(tt.in)
		if tt.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("LookupZone(%q) err = %v, want containing %q", tt.in, err, tt.errHas)
			}
			continue
		}
		if err != nil || z.ID != tt.id || z.IANA != tt.iana {
			t.Errorf("LookupZone(%q) = %d %s %v, want %d %s", tt.in, z.ID, z.IANA, err, tt.id, tt.iana)
		}
	}
}

func TestParseClock(t *testing.T) {
	tests := []struct {
		in   string
		want int
		bad  bool
	}{
		{in: "09:30AM", want: 570}, {in: "09:30 AM", want: 570}, {in: "9:30am", want: 570},
		{in: "09:30:00 am", want: 570}, {in: "9:45 PM", want: 1305}, {in: "12:00 AM", want: 0},
		{in: "12:15 PM", want: 735}, {in: "9 pm", want: 1260}, {in: "21", want: 1260}, {in: "21:30", want: 1290},
		{in: "00:00", want: 0}, {in: "23:59:00", want: 1439}, {in: "9:30 p.m.", want: 1290},
		{in: "9:30\u00a0AM", want: 570}, {in: "1\vAm", want: 60}, {in: "9:30\u200bam", bad: true},
		{in: "", bad: true}, {in: "24:00", bad: true}, {in: "13:00 PM", bad: true}, {in: "0:30 AM", bad: true},
		{in: "9:5", bad: true}, {in: "9:60", bad: true}, {in: "09:30:15", bad: true}, {in: "noon", bad: true},
		{in: "1:2:3:4", bad: true}, {in: "-1", bad: true}, {in: "123", bad: true},
		{in: "9:", bad: true}, {in: ":30", bad: true}, {in: "09:30:", bad: true}, {in: "09::30", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseClock(tt.in)
		if tt.bad != (err != nil) || (!tt.bad && got != tt.want) {
			t.Errorf("ParseClock(%q) = %d, %v; want %d bad=%v", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

func TestFormatClock(t *testing.T) {
	for min, want := range map[int]string{0: "12:00 AM", 570: "09:30 AM", 735: "12:15 PM", 1035: "05:15 PM", 1439: "11:59 PM", 1440 + 60: "01:00 AM"} {
		if got := FormatClock(min); got != want {
			t.Errorf("FormatClock(%d) = %q, want %q", min, got, want)
		}
	}
}

func TestFormat24(t *testing.T) {
	for min, want := range map[int]string{0: "00:00", 570: "09:30", 1035: "17:15", 1439: "23:59", -60: "23:00"} {
		if got := Format24(min); got != want {
			t.Errorf("Format24(%d) = %q, want %q", min, got, want)
		}
	}
}

func TestDiffTime(t *testing.T) {
	jan := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ iana, want string }{
		{"UTC", "+00:00"}, {"Asia/Kolkata", "+05:30"}, {"America/St_Johns", "-03:30"},
		{"America/New_York", "-05:00"}, {"Pacific/Kiritimati", "+14:00"},
	} {
		loc, err := time.LoadLocation(c.iana)
		if err != nil {
			t.Fatal(err)
		}
		if got := (Zone{Loc: loc}).DiffTime(jan); got != c.want {
			t.Errorf("DiffTime in %s = %q, want %q", c.iana, got, c.want)
		}
	}
	if got := (Zone{}).DiffTime(jan); got != "+00:00" {
		t.Errorf("DiffTime of the zero Zone = %q, want +00:00", got)
	}
	// Every offset, the quarter hours answered from the table and the
	// others (a zone's local mean time before 1900) formatted.
	for off := -15 * 3600; off <= 15*3600; off += 5 * 60 {
		h, m := off/3600, off%3600/60
		want := fmt.Sprintf("+%02d:%02d", h, m)
		if off < 0 {
			want = fmt.Sprintf("-%02d:%02d", -h, -m)
		}
		if got := (Zone{Loc: time.FixedZone("x", off)}).DiffTime(jan); got != want {
			t.Errorf("DiffTime at offset %ds = %q, want %q", off, got, want)
		}
	}
}

func TestParseDateAndHMS(t *testing.T) {
	for in, ok := range map[string]bool{"2024-02-29": true, "2023-02-29": false, "2026-13-01": false, "2026-1-5": false, "": false, "2026-11-22": true} {
		if _, err := ParseDate(in); (err == nil) != ok {
			t.Errorf("ParseDate(%q) err = %v", in, err)
		}
	}
	hms := map[string]time.Duration{"00:30:00": 30 * time.Minute, "01:02:03": time.Hour + 2*time.Minute + 3*time.Second, "100:00:00": 100 * time.Hour}
	for in, want := range hms {
		if got, err := ParseHMS(in); err != nil || got != want {
			t.Errorf("ParseHMS(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"1:00:00", "00:60:00", "00:00:60", "00:30", "aa:bb:cc", "", "-1:00:00"} {
		if _, err := ParseHMS(in); err == nil {
			t.Errorf("ParseHMS(%q) accepted", in)
		}
	}
}

func day(s string) time.Time {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func zone(id int) Zone { z, _ := ZoneByID(id); return z }

// local lists the sittings' starts as wall clock in the plan's zone.
func local(p Plan, occ []lms.Occurrence) []string {
	var out []string
	for _, o := range occ {
		out = append(out, o.Start.In(p.Zone.Loc).Format("2006-01-02 15:04 Mon"))
	}
	return out
}

func TestExpand(t *testing.T) {
	london := zone(28)
	tests := []struct {
		name string
		plan Plan
		want []string
	}{
		{"single", Plan{Date: day("2026-03-10"), StartMinute: 600, EndMinute: 660, Zone: london},
			[]string{"2026-03-10 10:00 Tue"}},
		{"daily count", Plan{Date: day("2026-03-10"), StartMinute: 600, EndMinute: 660, Zone: london, Repeat: 1, Count: 3},
			[]string{"2026-03-10 10:00 Tue", "2026-03-11 10:00 Wed", "2026-03-12 10:00 Thu"}},
		{"mon-sat skips sunday", Plan{Date: day("2026-03-13"), StartMinute: 600, EndMinute: 660, Zone: london, Repeat: 2, Count: 3},
			[]string{"2026-03-13 10:00 Fri", "2026-03-14 10:00 Sat", "2026-03-16 10:00 Mon"}},
		{"mon-fri skips weekend", Plan{Date: day("2026-03-13"), StartMinute: 600, EndMinute: 660, Zone: london, Repeat: 3, Until: day("2026-03-17")},
			[]string{"2026-03-13 10:00 Fri", "2026-03-16 10:00 Mon", "2026-03-17 10:00 Tue"}},
		{"weekly until inclusive", Plan{Date: day("2026-03-10"), StartMinute: 600, EndMinute: 660, Zone: london, Repeat: 4, Until: day("2026-03-24")},
			[]string{"2026-03-10 10:00 Tue", "2026-03-17 10:00 Tue", "2026-03-24 10:00 Tue"}},
		{"monthly from the 31st clamps to month ends", Plan{Date: day("2026-01-31"), StartMinute: 600, EndMinute: 660, Zone: london, Repeat: 5, Count: 4},
			[]string{"2026-01-31 10:00 Sat", "2026-02-28 10:00 Sat", "2026-03-31 10:00 Tue", "2026-04-30 10:00 Thu"}},
		{"monthly leap day", Plan{Date: day("2024-01-29"), StartMinute: 600, EndMinute: 660, Zone: london, Repeat: 5, Count: 2},
			[]string{"2024-01-29 10:00 Mon", "2024-02-29 10:00 Thu"}},
		{"yearly-ish leap day monthly from feb 29", Plan{Date: day("2024-02-29"), StartMinute: 600, EndMinute: 660, Zone: london, Repeat: 5, Count: 2},
			[]string{"2024-02-29 10:00 Thu", "2024-03-29 10:00 Fri"}},
		{"selected days, start date not among them", Plan{Date: day("2026-03-10"), StartMinute: 600, EndMinute: 660, Zone: london, Repeat: 6, Weekdays: []int{2, 6}, Count: 3},
			[]string{"2026-03-13 10:00 Fri", "2026-03-16 10:00 Mon", "2026-03-20 10:00 Fri"}},
		{"selected sunday is 1", Plan{Date: day("2026-03-10"), StartMinute: 600, EndMinute: 660, Zone: london, Repeat: 6, Weekdays: []int{1}, Count: 1},
			[]string{"2026-03-15 10:00 Sun"}},
	}
	for _, tt := range tests {
		occ, err := Expand(tt.plan)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := local(tt.plan, occ); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s:\n got %v\nwant %v", tt.name, got, tt.want)
		}
		for i, o := range occ {
			if o.Seq != i+1 || !o.End.After(o.Start) || o.Start.Location() != time.UTC {
				t.Errorf("%s: sitting %d = %+v", tt.name, i, o)
			}
		}
	}
}

func TestExpandAcrossDaylightSaving(t *testing.T) {
	// New York moves to summer time on 2026-03-08: 09:00 local stays 09:00,
	// its UTC instant moves from 14:00 to 13:00.
	ny := zone(23)
	occ, err := Expand(Plan{Date: day("2026-03-07"), StartMinute: 540, EndMinute: 600, Zone: ny, Repeat: 1, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := occ[0].Start.Format(time.RFC3339) + " " + occ[1].Start.Format(time.RFC3339); got != "2026-03-07T14:00:00Z 2026-03-08T13:00:00Z" {
		t.Errorf("starts = %s", got)
	}
	// A sitting across the autumn change (00:00-03:00 on 2026-11-01 in New
	// York, when 01:00-02:00 happens twice) lasts the three hours asked, in
	// elapsed time (issue 12, item 3): it ends at 02:00 local.
	occ, err = Expand(Plan{Date: day("2026-11-01"), StartMinute: 0, EndMinute: 180, Zone: ny})
	if err != nil {
		t.Fatal(err)
	}
	if d := occ[0].End.Sub(occ[0].Start); d != 3*time.Hour {
		t.Errorf("00:00-03:00 on the fall-back day lasts %v, want 3h", d)
	}
	// Sydney's summer time ends 2026-04-05: the offset goes from +11 to +10.
	syd := zone(5)
	occ, _ = Expand(Plan{Date: day("2026-04-04"), StartMinute: 600, EndMinute: 660, Zone: syd, Repeat: 1, Count: 2})
	if occ[0].Start.Format(time.RFC3339) != "2026-04-03T23:00:00Z" || occ[1].Start.Format(time.RFC3339) != "2026-04-05T00:00:00Z" {
		t.Errorf("sydney starts = %v %v", occ[0].Start, occ[1].Start)
	}
	// A wall time inside the spring-forward gap moves forward by the gap.
	occ, _ = Expand(Plan{Date: day("2026-03-08"), StartMinute: 150, EndMinute: 240, Zone: ny})
	if got := occ[0].Start.In(ny.Loc).Format("15:04"); got != "03:30" {
		t.Errorf("02:30 on the spring-forward day starts at %s local, want 03:30", got)
	}
}

func TestExpandCrossesMidnight(t *testing.T) {
	occ, err := Expand(Plan{Date: day("2026-03-10"), StartMinute: 23 * 60, EndMinute: 60, Zone: zone(28)})
	if err != nil {
		t.Fatal(err)
	}
	if d := occ[0].End.Sub(occ[0].Start); d != 2*time.Hour {
		t.Errorf("23:00-01:00 lasts %v", d)
	}
}

func TestExpandErrors(t *testing.T) {
	base := Plan{Date: day("2026-03-10"), StartMinute: 600, EndMinute: 660, Zone: zone(28)}
	tests := []struct {
		name  string
		edit  func(p *Plan)
		field string
	}{
		{"repeat out of range", func(p *Plan) { p.Repeat = 7; p.Count = 2 }, "repeat"},
		{"no end", func(p *Plan) { p.Repeat = 1 }, "end_classes_count"},
		{"both ends", func(p *Plan) { p.Repeat = 1; p.Count = 2; p.Until = day("2026-04-01") }, "end_date"},
		{"end before date", func(p *Plan) { p.Repeat = 1; p.Until = day("2026-03-01") }, "end_date"},
		{"too many", func(p *Plan) { p.Repeat = 1; p.Count = MaxSittings + 1 }, "end_classes_count"},
		{"too long", func(p *Plan) { p.Repeat = 1; p.Until = day("2036-03-01") }, "end_date"},
		{"selected without weekdays", func(p *Plan) { p.Repeat = 6; p.Count = 2 }, "weekdays"},
		{"weekday out of range", func(p *Plan) { p.Repeat = 6; p.Count = 2; p.Weekdays = []int{8} }, "weekdays"},
		{"no day in range", func(p *Plan) { p.Repeat = 6; p.Weekdays = []int{1}; p.Until = day("2026-03-12") }, "weekdays"},
	}
	for _, tt := range tests {
		p := base
		tt.edit(&p)
		_, err := Expand(p)
		var le *lms.Error
		if !errors.As(err, &le) || le.Code != lms.CodeInvalid || len(le.Fields) != 1 || le.Fields[0].Field != tt.field {
			t.Errorf("%s: err = %v, want field %s", tt.name, err, tt.field)
		}
	}
}

func TestStatusAt(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 3, 10, h, 0, 0, 0, time.UTC) }
	occ := []lms.Occurrence{{Seq: 1, Start: at(9), End: at(10)}, {Seq: 2, Start: at(12), End: at(13), Cancelled: true}, {Seq: 3, Start: at(15), End: at(16)}}
	tests := []struct {
		now    time.Time
		status string
		seq    int
	}{
		{at(8), Upcoming, 1}, {at(9), Live, 1}, {at(10), Upcoming, 3}, {at(12), Upcoming, 3},
		{at(15), Live, 3}, {at(16), Past, 0},
	}
	for _, tt := range tests {
		s, o, _ := StatusAt(occ, tt.now)
		if s != tt.status || o.Seq != tt.seq {
			t.Errorf("at %v: %s sitting %d, want %s %d", tt.now, s, o.Seq, tt.status, tt.seq)
		}
	}
	all := []lms.Occurrence{{Start: at(20), End: at(21), Cancelled: true}}
	if s, _, _ := StatusAt(all, at(8)); s != Past || !AllCancelled(all) || AllCancelled(occ) {
		t.Errorf("fully cancelled: %s", s)
	}
}

// TestExpandInDaylightSavingGap: sittings that start in a spring-forward
// gap move forward with the clocks and keep their length in elapsed time;
// they are never empty or backwards (issue 12, item 3).
func TestExpandInDaylightSavingGap(t *testing.T) {
	london := zone(28) // clocks go 01:00 GMT -> 02:00 BST on 2027-03-28
	tests := []struct {
		start, end int
		wantStart  string
		want       time.Duration
	}{
		{60, 120, "2027-03-28T01:00:00Z", time.Hour},
		{90, 120, "2027-03-28T01:30:00Z", 30 * time.Minute},
		{30, 150, "2027-03-28T00:30:00Z", 2 * time.Hour},
		{120, 180, "2027-03-28T01:00:00Z", time.Hour},
	}
	for _, tt := range tests {
		occ, err := Expand(Plan{Date: day("2027-03-28"), StartMinute: tt.start, EndMinute: tt.end, Zone: london, Repeat: RepeatDaily, Count: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got := occ[0].Start.Format(time.RFC3339); got != tt.wantStart {
			t.Errorf("%s-%s: starts %s, want %s", Format24(tt.start), Format24(tt.end), got, tt.wantStart)
		}
		for _, o := range occ {
			if d := o.End.Sub(o.Start); d != tt.want {
				t.Errorf("%s-%s: sitting %v lasts %v, want %v", Format24(tt.start), Format24(tt.end), o.Start, d, tt.want)
			}
		}
	}
}

// TestParsersRefuseSignsAndOverflow (issue 12, items 4 and 7).
func TestParsersRefuseSignsAndOverflow(t *testing.T) {
	for _, s := range []string{"+9:+5", "-0:00", "+09:30", "9:-5", " 9 :30", "9:3 0", "0x9:00"} {
		if m, err := ParseClock(s); err == nil {
			t.Errorf("ParseClock(%q) = %d, want an error", s, m)
		}
	}
	for _, s := range []string{"00:+1:00", "-1:00:00", "9223372036854775807:00:00", "100000:00:00", "00:00:+0", "00:60:00"} {
		if d, err := ParseHMS(s); err == nil {
			t.Errorf("ParseHMS(%q) = %v, want an error", s, d)
		}
	}
	if d, err := ParseHMS("99999:59:59"); err != nil || d <= 0 {
		t.Errorf("ParseHMS(99999:59:59) = %v, %v", d, err)
	}
	for _, s := range []string{"10000-01-01", "9999-12-31", "9001-01-01", "0001-01-01", "+2027-01-01"} {
		if d, err := ParseDate(s); err == nil {
			t.Errorf("ParseDate(%q) = %v, want an error", s, d)
		}
	}
	if _, err := ParseDate("9000-12-31"); err != nil {
		t.Errorf("ParseDate(9000-12-31): %v", err)
	}
}

// TestExpandInDaylightSavingFold: a wall time that happens twice is its
// first instant (found by FuzzExpand: time.Date chose the second).
func TestExpandInDaylightSavingFold(t *testing.T) {
	for _, tt := range []struct {
		date, zone   string
		start, end   int
		wantStart    string
		wantDuration time.Duration
	}{
		// London: 02:00 BST -> 01:00 GMT on 2027-10-31.
		{"2027-10-31", "Europe/London", 90, 120, "2027-10-31T00:30:00Z", 30 * time.Minute},
		{"2027-10-31", "Europe/London", 60, 60, "2027-10-31T00:00:00Z", 24 * time.Hour},
		// New York: 02:00 EDT -> 01:00 EST on 2027-11-07.
		{"2027-11-07", "America/New_York", 90, 105, "2027-11-07T05:30:00Z", 15 * time.Minute},
	} {
		z, err := LookupZone(tt.zone)
		if err != nil {
			t.Fatal(err)
		}
		occ, err := Expand(Plan{Date: day(tt.date), StartMinute: tt.start, EndMinute: tt.end, Zone: z})
		if err != nil {
			t.Fatal(err)
		}
		if got := occ[0].Start.Format(time.RFC3339); got != tt.wantStart {
			t.Errorf("%s %s %s: starts %s, want %s", tt.zone, tt.date, Format24(tt.start), got, tt.wantStart)
		}
		if got := occ[0].End.Sub(occ[0].Start); got != tt.wantDuration {
			t.Errorf("%s %s %s: lasts %v, want %v", tt.zone, tt.date, Format24(tt.start), got, tt.wantDuration)
		}
	}
}

// TestExpandOverSkippedDay: Samoa skipped 30 December 2011 whole; a daily
// class has no sitting that day and no two sittings at one instant (found
// by FuzzExpand).
func TestExpandOverSkippedDay(t *testing.T) {
	z, err := LookupZone("Pacific/Apia")
	if err != nil {
		t.Fatal(err)
	}
	occ, err := Expand(Plan{Date: day("2011-12-29"), StartMinute: 540, EndMinute: 600, Zone: z, Repeat: RepeatDaily, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range occ {
		got = append(got, o.Start.In(z.Loc).Format("2006-01-02 15:04"))
	}
	if want := "2011-12-29 09:00,2011-12-31 09:00,2012-01-01 09:00"; strings.Join(got, ",") != want {
		t.Errorf("sittings %v, want %s", got, want)
	}
}
