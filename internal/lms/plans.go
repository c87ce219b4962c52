package lms

import "sort"

// Plan is what a domain's classroom may do. A zero limit means no limit.
type Plan struct {
	Name string
	// AttendeeSeats is the most attendees (besides the teacher) a class
	// may be scheduled for.
	AttendeeSeats int
	// SessionMinutes is the longest sitting.
	SessionMinutes int
	// Connections is the most people in a sitting at once, teacher
	// included.
	Connections int
	// Recording says whether classes may be recorded.
	Recording bool
	// APIMinutes is the classroom time the plan includes.
	APIMinutes int
	// FileMaxBytes is the largest file (or presentation) shared in a
	// live room; FileQuotaBytes is the most all of a domain's shared files
	// may take together.
	FileMaxBytes   int64
	FileQuotaBytes int64
	// Commission is the share of class sales kept by the operator, in
	// percent.
	Commission string
}

// Built-in plans. The free plan is the hosted service's: 2 connections
// (1 teacher + 1 attendee), sittings of at most 30 minutes, 600 minutes of
// use, no recording. A self-hosted domain is unlimited unless an operator
// says otherwise (lectern domain set-plan).
var Plans = map[string]Plan{
	"free": {Name: "free", AttendeeSeats: 1, SessionMinutes: 30, Connections: 2, Recording: false, APIMinutes: 600,
		FileMaxBytes: 10 << 20, FileQuotaBytes: 100 << 20, Commission: "0"},
	"unlimited": {Name: "unlimited", Recording: true, FileMaxBytes: 200 << 20, FileQuotaBytes: 50 << 30, Commission: "0"},
}

// DefaultPlan is the plan of a new domain.
const DefaultPlan = "unlimited"

// PlanNames lists the built-in plans.
func PlanNames() []string {
	var names []string
	for n := range Plans {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PlanOf returns the named plan, or the default plan for an unknown name.
func PlanOf(name string) Plan {
	if p, ok := Plans[name]; ok {
		return p
	}
	return Plans[DefaultPlan]
}
