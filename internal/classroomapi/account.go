package classroomapi

import (
	"context"
	"strconv"

	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
	"github.com/lectern-lms/lectern/internal/lms"
)

// regions are the data-centre regions of the specification's isRegion
// list. A self-hosted server runs in one place; the list is kept so that
// clients that show it, and isRegion values, keep working.
var regions = []string{
	0: "Intelligent routing to nearest location (experimental)",
	1: "US East (Dallas)", 2: "US West (Los Angeles)", 3: "US East (New York)",
	4: "Europe (Frankfurt)", 5: "Europe (London)", 6: "Asia Pacific (Bangalore)",
	7: "Asia Pacific (Singapore)", 8: "US East (Miami)", 9: "Europe (Milan)",
	10: "Asia Pacific (Tokyo)", 11: "Middle East (Dubai)", 12: "Australia (Sydney)",
	13: "Europe (Paris)", 14: "Asia Pacific (Hong Kong)", 15: "Europe (Amsterdam)",
}

// getservers: the list of {id, name} regions.
func (a *API) getServers(ctx context.Context, c *call) (*result, error) {
	rs := make([]obj, len(regions))
	for i, name := range regions {
		rs[i] = obj{{"id", strconv.Itoa(i)}, {"name", name}}
	}
	return wire.Records("server", rs, "", ""), nil
}

// limit writes a plan limit: "unlimited" for 0.
func limit(n int) string {
	if n == 0 {
		return "unlimited"
	}
	return strconv.Itoa(n)
}

// getplan: the domain's plan and its limits. Clients read commission.
func (a *API) getPlan(ctx context.Context, c *call) (*result, error) {
	p := lms.PlanOf(c.Domain.Plan)
	rec := "0"
	if p.Recording {
		rec = "1"
	}
	return wire.Object("getplan",
		kv{"plan", p.Name},
		kv{"commission", p.Commission},
		kv{"seat_attendees", limit(p.AttendeeSeats)},
		kv{"session_minutes", limit(p.SessionMinutes)},
		kv{"connections", limit(p.Connections)},
		kv{"api_minutes", limit(p.APIMinutes)},
		kv{"recording", rec},
	), nil
}
