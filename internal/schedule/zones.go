// Package schedule holds the calendar rules of live classes: the classroom
// API's timezone table, parsing of clock times and dates, expansion of
// recurrence rules into sittings, and a class's status at an instant.
package schedule

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	// Zone rules are compiled in so that a machine without a system zone
	// database computes the same instants.
	_ "time/tzdata"
)

// Zone is a timezone a class is scheduled in.
type Zone struct {
	// ID is the classroom API's numeric id; 0 when the zone was given by
	// IANA name and the table has no entry for it.
	ID int
	// Offset is the table's nominal offset, such as "+05:30"; informative
	// only: instants follow the IANA zone's real rules.
	Offset string
	// Label is the table's text, such as "Chennai/Kolkata/Mumbai/New Delhi".
	Label string
	// IANA is the zone name, such as "Asia/Kolkata".
	IANA string
	Loc  *time.Location
}

// zoneTable is the classroom API's timezone list: id, nominal offset,
// label, and the IANA zone of the label's first city (or the zone the
// label names). Instants follow the IANA zone, so daylight saving is
// right; where a city's real offset has changed since the label was
// written (Tbilisi, Almaty), the real rules win.
var zoneTable = []struct {
	id            int
	offset, label string
	iana          string
}{
	{28, "+00:00", "GMT Dublin/Edinburgh/Lisbon/London", "Europe/London"},
	{30, "+00:00", "GMT Monrovia/Reykjavik", "Atlantic/Reykjavik"},
	{72, "+01:00", "Amsterdam/Berlin/Bern/Rome/Stockholm/Vienna", "Europe/Berlin"},
	{53, "+01:00", "Brussels/Copenhagen/Madrid/Paris", "Europe/Paris"},
	{14, "+01:00", "Sarajevo/Skopje/Warsaw/Zagreb", "Europe/Warsaw"},
	{71, "+01:00", "West Central Africa", "Africa/Lagos"},
	{13, "+01:00", "Belgrade/Bratislava/Budapest/Ljubljana/Prague", "Europe/Budapest"},
	{83, "+02:00", "Amman", "Asia/Amman"},
	{84, "+02:00", "Beirut", "Asia/Beirut"},
	{24, "+02:00", "Cairo", "Africa/Cairo"},
	{61, "+02:00", "Harare/Pretoria", "Africa/Johannesburg"},
	{27, "+02:00", "Helsinki/Kyiv/Riga/Sofia/Tallinn/Vilnius", "Europe/Helsinki"},
	{35, "+02:00", "Jerusalem", "Asia/Jerusalem"},
	{21, "+02:00", "Minsk", "Europe/Minsk"},
	{86, "+02:00", "Windhoek", "Africa/Windhoek"},
	{31, "+03:00", "Athens/Istanbul/Minsk", "Europe/Istanbul"},
	{2, "+03:00", "Baghdad", "Asia/Baghdad"},
	{49, "+03:00", "Kuwait/Riyadh", "Asia/Riyadh"},
	{54, "+03:00", "Moscow/St. Petersburg/Volgograd", "Europe/Moscow"},
	{19, "+03:00", "Nairobi", "Africa/Nairobi"},
	{87, "+03:00", "Tbilisi", "Asia/Tbilisi"},
	{34, "+03:30", "Tehran", "Asia/Tehran"},
	{1, "+04:00", "Abu Dhabi/Muscat", "Asia/Dubai"},
	{88, "+04:00", "Baku", "Asia/Baku"},
	{9, "+04:00", "Baku/Tbilisi/Yerevan", "Asia/Yerevan"},
	{89, "+04:00", "Port Louis", "Indian/Mauritius"},
	{47, "+04:30", "Kabul", "Asia/Kabul"},
	{25, "+05:00", "Ekaterinburg", "Asia/Yekaterinburg"},
	{90, "+05:00", "Islamabad/Karachi", "Asia/Karachi"},
	{73, "+05:00", "Islamabad/Karachi/Tashkent", "Asia/Tashkent"},
	{33, "+05:30", "Chennai/Kolkata/Mumbai/New Delhi", "Asia/Kolkata"},
	{62, "+05:30", "Sri Jayawardenepura", "Asia/Colombo"},
	{91, "+05:45", "Kathmandu", "Asia/Kathmandu"},
	{42, "+06:00", "Almaty/Novosibirsk", "Asia/Almaty"},
	{12, "+06:00", "Astana/Dhaka", "Asia/Dhaka"},
	{41, "+06:30", "Rangoon", "Asia/Yangon"},
	{59, "+07:00", "Bangkok/Hanoi/Jakarta", "Asia/Bangkok"},
	{50, "+07:00", "Krasnoyarsk", "Asia/Krasnoyarsk"},
	{17, "+08:00", "Beijing/Chongqing/Hong Kong/Urumqi", "Asia/Shanghai"},
	{46, "+08:00", "Irkutsk/Ulaan Bataar", "Asia/Irkutsk"},
	{60, "+08:00", "Kuala Lumpur/Singapore", "Asia/Kuala_Lumpur"},
	{70, "+08:00", "Perth", "Australia/Perth"},
	{63, "+08:00", "Taipei", "Asia/Taipei"},
	{65, "+09:00", "Osaka/Sapporo/Tokyo", "Asia/Tokyo"},
	{77, "+09:00", "Seoul", "Asia/Seoul"},
	{75, "+09:00", "Yakutsk", "Asia/Yakutsk"},
	{10, "+09:30", "Adelaide", "Australia/Adelaide"},
	{4, "+09:30", "Darwin", "Australia/Darwin"},
	{20, "+10:00", "Brisbane", "Australia/Brisbane"},
	{5, "+10:00", "Canberra/Melbourne/Sydney", "Australia/Sydney"},
	{74, "+10:00", "Guam/Port Moresby", "Pacific/Port_Moresby"},
	{64, "+10:00", "Hobart", "Australia/Hobart"},
	{69, "+10:00", "Vladivostok", "Asia/Vladivostok"},
	{15, "+11:00", "Magadan/Solomon Is./New Caledonia", "Asia/Magadan"},
	{44, "+12:00", "Auckland/Wellington", "Pacific/Auckland"},
	{26, "+12:00", "Fiji/Kamchatka/Marshall Is.", "Pacific/Fiji"},
	{6, "-01:00", "Azores", "Atlantic/Azores"},
	{8, "-01:00", "Cape Verde Is.", "Atlantic/Cape_Verde"},
	{39, "-02:00", "Mid-Atlantic", "Atlantic/South_Georgia"},
	{22, "-03:00", "Brasilia", "America/Sao_Paulo"},
	{94, "-03:00", "Buenos Aires", "America/Argentina/Buenos_Aires"},
	{55, "-03:00", "Buenos Aires/Georgetown", "America/Cayenne"},
	{29, "-03:00", "Greenland", "America/Nuuk"},
	{95, "-03:00", "Montevideo", "America/Montevideo"},
	{45, "-03:30", "Newfoundland", "America/St_Johns"},
	{3, "-04:00", "Atlantic Time (Canada)", "America/Halifax"},
	{57, "-04:00", "Georgetown/La Paz/San Juan", "America/La_Paz"},
	{96, "-04:00", "Manaus", "America/Manaus"},
	{51, "-04:00", "Santiago", "America/Santiago"},
	{76, "-04:30", "Caracas", "America/Caracas"},
	{56, "-05:00", "Bogota/Lima/Quito", "America/Bogota"},
	{23, "-05:00", "Eastern Time (US & Canada)", "America/New_York"},
	{67, "-05:00", "Indiana (East)", "America/Indiana/Indianapolis"},
	{11, "-06:00", "Central America", "America/Guatemala"},
	{16, "-06:00", "Central Time (US & Canada)", "America/Chicago"},
	{37, "-06:00", "Guadalajara/Mexico City/Monterrey", "America/Mexico_City"},
	{7, "-06:00", "Saskatchewan", "America/Regina"},
	{68, "-07:00", "Arizona", "America/Phoenix"},
	{38, "-07:00", "Chihuahua/La Paz/Mazatlan", "America/Mazatlan"},
	{40, "-07:00", "Mountain Time (US & Canada)", "America/Denver"},
	{52, "-08:00", "Pacific Time (US & Canada)", "America/Los_Angeles"},
	{104, "-08:00", "Tijuana/Baja California", "America/Tijuana"},
	{48, "-09:00", "Alaska", "America/Anchorage"},
	{32, "-10:00", "Hawaii", "Pacific/Honolulu"},
	{58, "-11:00", "Midway Island/Samoa", "Pacific/Pago_Pago"},
	{18, "-12:00", "International Date Line West", "Etc/GMT+12"},
	{105, "-04:00", "Eastern Daylight Time (US & Canada)", "America/New_York"},
}

var (
	zonesByID   = map[int]Zone{}
	zonesByIANA = map[string]Zone{}
)

func init() {
	for _, z := range zoneTable {
		loc, err := time.LoadLocation(z.iana)
		if err != nil {
			panic("schedule: zone " + z.iana + ": " + err.Error())
		}
		zone := Zone{ID: z.id, Offset: z.offset, Label: z.label, IANA: z.iana, Loc: loc}
		zonesByID[z.id] = zone
		if _, dup := zonesByIANA[z.iana]; !dup {
			zonesByIANA[z.iana] = zone
		}
	}
}

// Zones returns the whole table, by id.
func Zones() []Zone {
	zs := make([]Zone, 0, len(zonesByID))
	for _, z := range zonesByID {
		zs = append(zs, z)
	}
	sort.Slice(zs, func(i, j int) bool { return zs[i].ID < zs[j].ID })
	return zs
}

// ZoneByID returns the table's zone with that id.
func ZoneByID(id int) (Zone, bool) {
	z, ok := zonesByID[id]
	return z, ok
}

// LookupZone accepts a numeric id of the table or an IANA zone name
// ("Europe/Paris"). An IANA name that the table lists comes back with the
// table's id and label; any other valid IANA name has ID 0 and its name as
// label.
func LookupZone(s string) (Zone, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Zone{}, fmt.Errorf("is required")
	}
	if n, err := strconv.Atoi(s); err == nil {
		if z, ok := zonesByID[n]; ok {
			return z, nil
		}
		return Zone{}, fmt.Errorf("%d is not a timezone id of the classroom API's table", n)
	}
	if z, ok := zonesByIANA[s]; ok {
		return z, nil
	}
	// "Local" and names without a slash (other than UTC) are not zones a
	// client means.
	if s != "UTC" && !strings.Contains(s, "/") {
		return Zone{}, fmt.Errorf("%q is neither a timezone id nor an IANA zone name such as Europe/Paris", s)
	}
	if z, ok := otherZones.Load(s); ok {
		return z.(Zone), nil
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return Zone{}, fmt.Errorf("%q is neither a timezone id nor an IANA zone name such as Europe/Paris", s)
	}
	z := Zone{IANA: s, Label: s, Loc: loc}
	otherZones.Store(s, z)
	return z, nil
}

// otherZones caches the IANA zones outside the table that classes use:
// time.LoadLocation reads and parses the zone's rules on every call, and
// listings resolve a class's zone for each class.
var otherZones sync.Map

// DiffTime formats the zone's offset from UTC at t as "+05:30". The zero
// Zone (a class whose zone this build does not know) is UTC.
func (z Zone) DiffTime(t time.Time) string {
	loc := z.Loc
	if loc == nil {
		loc = time.UTC
	}
	_, off := t.In(loc).Zone()
	if off%diffStep == 0 && off >= -diffSteps*diffStep && off <= diffSteps*diffStep {
		return diffTimes[off/diffStep+diffSteps]
	}
	return formatDiff(off)
}

// The offsets of today's zones are whole quarter hours within 14 hours of
// UTC: DiffTime answers them from diffTimes, made once, rather than
// making a string a call (a listing formats one for every class).
const (
	diffStep  = 15 * 60 // seconds
	diffSteps = 14 * 4  // quarter hours on each side of UTC
)

var diffTimes = func() (t [2*diffSteps + 1]string) {
	for i := range t {
		t[i] = formatDiff((i - diffSteps) * diffStep)
	}
	return t
}()

// formatDiff formats an offset from UTC in seconds as "+05:30".
func formatDiff(off int) string {
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	return string(appendHM(append(make([]byte, 0, 6), sign), off/3600, off%3600/60))
}
