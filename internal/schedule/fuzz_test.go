package schedule

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The fuzz tests below check the parsers and the recurrence expansion
// against their documented rules (issue 12, "Fuzzing that stays"). Their
// seeds are the inputs of the defects found: signs, overflow, dates past
// 9999, and sittings in daylight-saving gaps and folds.

// clockForm is ParseClock's documented grammar, on the lowered, trimmed
// text: hours of one or two digits, then optionally :MM and :SS of two
// digits each, then optionally a meridiem, after any white space
// (unicode.IsSpace, as strings.TrimSpace: a no-break space too).
var clockForm = regexp.MustCompile(`^([0-9]{1,2})(?::([0-9]{2}))?(?::([0-9]{2}))?[\t\n\v\f\r\x{85}\x{2028}\x{2029}\p{Zs}]*(am|pm|a\.m\.|p\.m\.)?$`)

func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"09:30AM", "09:30 AM", "9:30am", "09:30:00 am", "9 PM", "21", "21:30", "21:30:00",
		"12:00 AM", "12:00 PM", "00:00", "23:59", "24:00", "0 am", "13 pm", "9:30:01",
		"+9:+5", "-0:00", "+09:30", "9:-5", " 9 :30", "9:3 0", "0x9:00", "９:30", "9:30\x00", "\xff9:30", "9::30", ":30", "9:30:00:00",
		"1\vAm", "9:30\u00a0AM", "9:30\u3000pm", "9:30\u200bam"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseClock(s)
		if err != nil {
			return
		}
		if m < 0 || m >= 24*60 {
			t.Fatalf("ParseClock(%q) = %d, outside a day", s, m)
		}
		g := clockForm.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
		if g == nil {
			t.Fatalf("ParseClock(%q) accepted text outside the documented forms (%d)", s, m)
		}
		h, _ := strconv.Atoi(g[1])
		min, _ := strconv.Atoi(g[2] + "0")
		min /= 10
		if g[3] != "" && g[3] != "00" {
			t.Fatalf("ParseClock(%q) accepted seconds other than 00", s)
		}
		switch g[4] {
		case "":
			if h > 23 {
				t.Fatalf("ParseClock(%q) accepted hour %d", s, h)
			}
		default:
			if h < 1 || h > 12 {
				t.Fatalf("ParseClock(%q) accepted 12-hour hour %d", s, h)
			}
			h %= 12
			if g[4][0] == 'p' {
				h += 12
			}
		}
		if want := h*60 + min; m != want || min > 59 {
			t.Fatalf("ParseClock(%q) = %d, want %d", s, m, want)
		}
		// Both written forms read back as the same minute.
		for _, w := range []string{FormatClock(m), Format24(m)} {
			if back, err := ParseClock(w); err != nil || back != m {
				t.Fatalf("ParseClock(%q) = %d, %v; want %d (written from %q)", w, back, err, m, s)
			}
		}
	})
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2027-03-28", "2027-10-31", "2024-02-29", "2023-02-29", "1900-01-01", "1899-12-31",
		"9000-12-31", "9001-01-01", "9999-12-31", "10000-01-01", "0001-01-01", "+2027-01-01", "-2027-01-01",
		"2027-3-28", "2027-03-28 ", "2027-03-28\x00", "2027-03-28T00:00:00Z", "２０２７-03-28"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDate(s)
		if err != nil {
			return
		}
		if d.Before(MinDate) || d.After(MaxDate) {
			t.Fatalf("ParseDate(%q) = %v, outside %v..%v", s, d, MinDate, MaxDate)
		}
		if d.Location() != time.UTC || d.Hour() != 0 || d.Minute() != 0 || d.Second() != 0 || d.Nanosecond() != 0 {
			t.Fatalf("ParseDate(%q) = %v, not a UTC midnight", s, d)
		}
		if got := d.Format(time.DateOnly); got != strings.TrimSpace(s) {
			t.Fatalf("ParseDate(%q) = %s: the date does not read back as sent", s, got)
		}
	})
}

func FuzzParseHMS(f *testing.F) {
	for _, s := range []string{"00:00:00", "01:30:00", "99999:59:59", "100000:00:00", "00:+1:00", "-1:00:00",
		"+1:00:00", "9223372036854775807:00:00", "00:60:00", "00:00:60", "00:00:+0", "1:00:00", "00:1:00",
		"00:00", "00:00:00:00", " 01:00:00 ", "01:00:00\x00", "٠١:00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseHMS(s)
		if err != nil {
			return
		}
		max := MaxHMSHours*time.Hour + 59*time.Minute + 59*time.Second
		if d < 0 || d > max {
			t.Fatalf("ParseHMS(%q) = %v, outside 0..%v", s, d, max)
		}
		if strings.Trim(strings.TrimSpace(s), "0123456789:") != "" {
			t.Fatalf("ParseHMS(%q) accepted something other than digits and colons", s)
		}
		h, rest := d/time.Hour, d%time.Hour
		w := fmt.Sprintf("%02d:%02d:%02d", h, rest/time.Minute, rest%time.Minute/time.Second)
		if back, err := ParseHMS(w); err != nil || back != d {
			t.Fatalf("ParseHMS(%q) = %v, %v; want %v (written from %q)", w, back, err, d, s)
		}
	})
}

func FuzzLookupZone(f *testing.F) {
	for _, s := range []string{"28", " 28 ", "105", "0", "-28", "2147483648", "9223372036854775808", "Europe/London",
		"America/Sao_Paulo", "Pacific/Apia", "Australia/Lord_Howe", "UTC", "Local", "", "../etc/passwd", "/etc/localtime",
		"Europe/London\x00", "Europe/\xffLondon", "Etc/GMT+12", "europe/london"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		z, err := LookupZone(s)
		if err != nil {
			return
		}
		if z.Loc == nil || z.IANA == "" || z.Label == "" {
			t.Fatalf("LookupZone(%q) = %+v: incomplete", s, z)
		}
		if z.IANA == "Local" || z.Loc == time.Local && time.Local.String() != "UTC" {
			t.Fatalf("LookupZone(%q) gave the machine's local zone", s)
		}
		if z.ID != 0 {
			if tz, ok := ZoneByID(z.ID); !ok || tz.IANA != z.IANA {
				t.Fatalf("LookupZone(%q) = id %d %s, the table says %s", s, z.ID, z.IANA, tz.IANA)
			}
		}
		// The name found looks up the same zone again.
		again, err := LookupZone(z.IANA)
		if err != nil || again.IANA != z.IANA {
			t.Fatalf("LookupZone(%q) = %s, which looks up as %+v, %v", s, z.IANA, again, err)
		}
	})
}

// FuzzExpand reads a class as the APIs do (date, start and end times,
// timezone through the parsers above) and checks every sitting: it lasts
// exactly the asked duration in elapsed time, starts at the asked wall
// clock on its day (or, inside a spring-forward gap, where the clocks
// moved it, or at the first instant of an autumn fold), sittings follow
// each other, and every instant stays within the date bounds.
func FuzzExpand(f *testing.F) {
	for _, c := range []struct {
		date, start, end, zone string
		repeat                 uint8
		count                  uint16
	}{
		{"2027-03-28", "01:00", "02:00", "28", 0, 0},            // London's gap: 01:00-02:00 does not exist
		{"2027-03-28", "01:30", "02:00", "28", 0, 0},            // starts in the gap, would end before it starts
		{"2027-03-27", "01:30", "02:30", "28", 1, 5},            // a daily class across the gap
		{"2027-10-31", "01:30", "02:00", "Europe/London", 0, 0}, // London's fold: 01:00-02:00 happens twice
		{"2027-10-30", "01:00", "01:00", "Europe/London", 1, 3},
		{"2027-03-14", "02:30", "03:15", "23", 4, 3},               // New York's gap
		{"2027-11-07", "01:30", "01:45", "America/New_York", 0, 0}, // New York's fold
		{"2027-10-03", "02:00", "02:30", "Australia/Lord_Howe", 0, 0},
		{"2011-12-29", "09:00", "10:00", "Pacific/Apia", 1, 3}, // a day skipped whole
		{"2018-11-04", "00:00", "00:30", "America/Sao_Paulo", 0, 0},
		{"2027-03-26", "00:00", "23:59", "Asia/Gaza", 1, 3},
		{"2027-01-31", "09:00", "10:00", "28", 5, 14},
		{"9000-12-31", "23:30", "23:00", "Pacific/Auckland", 0, 0},
		{"9000-12-01", "23:30", "23:00", "Pacific/Kiritimati", 5, 1000},
		{"1900-01-01", "00:00", "00:01", "Etc/GMT+12", 1, 2},
		{"10000-01-01", "09:00", "10:00", "28", 0, 0},
		{"2027-03-28", "+9:+5", "-0:00", "28", 0, 0},
	} {
		f.Add(c.date, c.start, c.end, c.zone, c.repeat, c.count)
	}
	f.Fuzz(func(t *testing.T, date, start, end, zone string, repeat uint8, count uint16) {
		day, err1 := ParseDate(date)
		sm, err2 := ParseClock(start)
		em, err3 := ParseClock(end)
		z, err4 := LookupZone(zone)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			return
		}
		p := Plan{Date: day, StartMinute: sm, EndMinute: em, Zone: z, Repeat: int(repeat % 7)}
		if p.Repeat != 0 {
			p.Count = 1 + int(count)%MaxSittings
		}
		if p.Repeat == RepeatSelected {
			p.Weekdays = []int{1 + int(count)%7, 1 + int(count/7)%7}
		}
		occ, err := Expand(p)
		if err != nil {
			t.Fatalf("Expand(%s %s-%s %s repeat %d count %d): %v", date, start, end, z.IANA, p.Repeat, p.Count, err)
		}
		if len(occ) == 0 || len(occ) > MaxSittings || p.Repeat != 0 && len(occ) != p.Count {
			t.Fatalf("Expand: %d sittings for count %d", len(occ), p.Count)
		}
		asked := time.Duration(em-sm) * time.Minute
		if asked <= 0 {
			asked += 24 * time.Hour
		}
		// The last sitting is at most MaxSittings months after the last date.
		lo, hi := MinDate.Add(-24*time.Hour), MaxDate.AddDate(0, MaxSittings, 2)
		for i, o := range occ {
			if o.Seq != i+1 {
				t.Fatalf("sitting %d has seq %d", i+1, o.Seq)
			}
			if got := o.End.Sub(o.Start); got != asked {
				t.Fatalf("sitting %d (%v in %s) lasts %v, asked %v", o.Seq, o.Start, z.IANA, got, asked)
			}
			if i > 0 && !o.Start.After(occ[i-1].Start) {
				t.Fatalf("sitting %d starts at %v, not after sitting %d at %v", o.Seq, o.Start, i, occ[i-1].Start)
			}
			if o.Start.Before(lo) || o.End.After(hi) || o.End.Year() > 9999 {
				t.Fatalf("sitting %d runs %v-%v, outside the date bounds", o.Seq, o.Start, o.End)
			}
			checkWallStart(t, o.Start, sm, z.Loc)
		}
	})
}

// checkWallStart checks that start is the first instant showing minute min
// on its day in loc or, when no instant shows it (a gap), the instant the
// wall time names in the offset in force before the gap.
func checkWallStart(t *testing.T, start time.Time, min int, loc *time.Location) {
	t.Helper()
	l := start.In(loc)
	if l.Hour()*60+l.Minute() == min && l.Second() == 0 {
		// No earlier instant of the same day shows the same wall clock:
		// in a fold, the first of the two is taken.
		for _, back := range []time.Duration{15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour} {
			e := start.Add(-back).In(loc)
			if e.Year() == l.Year() && e.YearDay() == l.YearDay() && e.Hour() == l.Hour() && e.Minute() == l.Minute() {
				t.Fatalf("start %v is the second instant showing %s in %s; %v shows it first", start, Format24(min), loc, e)
			}
		}
		return
	}
	// A gap: the wall time read in the offset of 12 hours before.
	_, before := start.Add(-12 * time.Hour).In(loc).Zone()
	wall := start.Add(time.Duration(before) * time.Second).UTC()
	if wall.Hour()*60+wall.Minute() != min || wall.Second() != 0 {
		t.Fatalf("start %v (%v in %s) shows neither %s nor the gap's moved time", start, l, loc, Format24(min))
	}
	// The wall time really is skipped: read in the offset in force at
	// start, it does not show min either.
	_, after := l.Zone()
	if alt := wall.Add(-time.Duration(after) * time.Second).In(loc); alt.Hour()*60+alt.Minute() == min {
		t.Fatalf("start %v (%v in %s) moved %s although %v shows it", start, l, loc, Format24(min), alt)
	}
}
