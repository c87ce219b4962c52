package classroomapi

import (
	"context"
	"strconv"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
)

// requiredID reads a required positive integer parameter sent under any of
// names (the first is the one error messages use).
func requiredID(p *httpx.Params, names ...string) (int64, error) {
	v, _ := p.First(names...)
	if v == "" {
		return 0, fail("%s is required", names[0])
	}
	n, err := httpx.ParseInt(v)
	if err != nil || n <= 0 {
		return 0, fail("%s must be a positive whole number, not %q", names[0], v)
	}
	return n, nil
}

// optionalFlag reads a 0/1 parameter; def when absent.
func optionalFlag(p *httpx.Params, name string, def int) (int, error) {
	v := p.Get(name)
	if v == "" {
		return def, nil
	}
	if v != "0" && v != "1" {
		return 0, fail("%s must be 0 or 1, not %q", name, v)
	}
	return int(v[0] - '0'), nil
}

// ownedClass loads a class of the caller's domain. A class of another
// domain answers "Invalid Class Owner", as the hosted service does; an id
// no domain has answers that no such class exists.
func (a *API) ownedClass(ctx context.Context, c *call, id int64) (lms.LiveClass, error) {
	cls, err := a.Store.LiveClass(ctx, c.Domain.ID, id)
	if err == nil || !lms.IsNotFound(err) {
		return cls, err
	}
	if _, err := a.Store.ClassOwner(ctx, id); err == nil {
		return lms.LiveClass{}, fail("Invalid Class Owner")
	}
	return lms.LiveClass{}, fail("Invalid class_id: there is no class %s", strconv.FormatInt(id, 10))
}

// classParam loads the caller's class named by the parameter name.
func (a *API) classParam(ctx context.Context, c *call, name string) (lms.LiveClass, error) {
	id, err := requiredID(c.P, name)
	if err != nil {
		return lms.LiveClass{}, err
	}
	return a.ownedClass(ctx, c, id)
}

// classID reads class_id and checks the class is the caller's.
func (a *API) classID(ctx context.Context, c *call) (int64, error) {
	cls, err := a.classParam(ctx, c, "class_id")
	return cls.ID, err
}
