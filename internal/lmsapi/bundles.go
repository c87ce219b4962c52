package lmsapi

import (
	"net/http"

	"github.com/lectern-lms/lectern/internal/lms"
)

// bundleJSON is a bundle as get, create and update answer it: the list
// item fields plus description and the member ids by kind.
func bundleJSON(b lms.Bundle) map[string]any {
	members := map[string][]int64{"courses": {}, "tests": {}, "classes": {}}
	for _, it := range b.Items {
		k := map[string]string{lms.KindCourse: "courses", lms.KindTest: "tests", lms.KindClass: "classes"}[it.Kind]
		members[k] = append(members[k], it.ID)
	}
	return map[string]any{"id": b.ID, "bundle_id": b.ID, "bundle_name": b.Name, "description": b.Description,
		"courses": members["courses"], "tests": members["tests"], "classes": members["classes"]}
}

// readBundleName reads bundle_name (or name): required on create; on
// update, when sent, not blank.
func readBundleName(c *call, v *lms.Validator, create bool) (string, bool) {
	name, param := c.P.First("bundle_name", "name")
	if param == "" && c.P.Sent("bundle_name") {
		v.Add("bundle_name", "must not be blank")
	}
	if param == "" && create {
		v.Add("bundle_name", "is required (or send it as name)")
	}
	checkLen(v, "bundle_name", name, maxName)
	checkLen(v, "description", c.P.Get("description"), maxText)
	return name, param != ""
}

// POST /bundles/create: bundle_name (or name), description.
func (a *API) createBundle(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	name, _ := readBundleName(c, &v, true)
	if err := v.Err(); err != nil {
		return err
	}
	b, err := a.Store.CreateBundle(r.Context(), c.Domain.ID, lms.Bundle{Name: name, Description: c.P.Get("description")})
	if err != nil {
		return err
	}
	return ok(w, "Bundle created", bundleJSON(b))
}

// GET /bundles/get/{bundle_id}.
func (a *API) getBundle(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "bundle_id")
	if err != nil {
		return err
	}
	b, err := a.Store.Bundle(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, "Bundle found", bundleJSON(b))
}

// PUT /bundles/update/{bundle_id}: bundle_name (or name), description;
// fields not sent keep their value.
func (a *API) updateBundle(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	id := c.P.ID(&v, "bundle_id")
	name, hasName := readBundleName(c, &v, false)
	if err := v.Err(); err != nil {
		return err
	}
	b, err := a.Store.UpdateBundle(r.Context(), c.Domain.ID, id, func(b *lms.Bundle) {
		if hasName {
			b.Name = name
		}
		if c.P.Sent("description") {
			b.Description = c.P.Get("description")
		}
	})
	if err != nil {
		return err
	}
	return ok(w, "Bundle updated", bundleJSON(b))
}

// DELETE /bundles/delete/{bundle_id}.
func (a *API) deleteBundle(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := idParam(c, "bundle_id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteBundle(r.Context(), c.Domain.ID, id); err != nil {
		return err
	}
	return ok(w, "Bundle deleted", map[string]any{"id": id})
}

// POST /bundles/list: page, limit.
func (a *API) listBundles(w http.ResponseWriter, r *http.Request, c *call) error {
	var v lms.Validator
	pg := readPage(c, &v)
	if err := v.Err(); err != nil {
		return err
	}
	bundles, total, err := a.Store.ListBundles(r.Context(), c.Domain.ID, pg.store())
	if err != nil {
		return err
	}
	type item struct {
		ID         int64  `json:"id"`
		BundleID   int64  `json:"bundle_id"`
		BundleName string `json:"bundle_name"`
	}
	data := make([]item, len(bundles))
	for i, b := range bundles {
		data[i] = item{b.ID, b.ID, b.Name}
	}
	return writeJSON(w, pg.body("Bundles", data, total))
}

// bundleItem reads bundleId and exactly one of courseId, testId, classId.
func bundleItem(c *call) (int64, lms.Item, error) {
	var v lms.Validator
	bundleID := c.P.ID(&v, "bundleId")
	var it lms.Item
	sent := 0
	for _, k := range []struct{ param, kind string }{{"courseId", lms.KindCourse}, {"testId", lms.KindTest}, {"classId", lms.KindClass}} {
		if c.P.Has(k.param) {
			sent++
			it = lms.Item{Kind: k.kind, ID: c.P.ID(&v, k.param)}
		}
	}
	if sent != 1 {
		v.Add("courseId", "send exactly one of courseId, testId or classId")
	}
	return bundleID, it, v.Err()
}

// POST /bundles/addItem: bundleId and one of courseId, testId, classId.
// Users enrolled in the bundle are enrolled in the new item.
func (a *API) addBundleItem(w http.ResponseWriter, r *http.Request, c *call) error {
	bundleID, it, err := bundleItem(c)
	if err != nil {
		return err
	}
	added, err := a.Store.AddBundleItem(r.Context(), c.Domain.ID, bundleID, it)
	if err != nil {
		return err
	}
	msg := "Item added to bundle"
	if !added {
		msg = "Item is already in the bundle; nothing changed"
	}
	return a.answerBundle(w, r, c, bundleID, msg)
}

// POST /bundles/removeItem: bundleId and one of courseId, testId,
// classId. Enrollments in the item that came from the bundle go with it.
func (a *API) removeBundleItem(w http.ResponseWriter, r *http.Request, c *call) error {
	bundleID, it, err := bundleItem(c)
	if err != nil {
		return err
	}
	removed, err := a.Store.RemoveBundleItem(r.Context(), c.Domain.ID, bundleID, it)
	if err != nil {
		return err
	}
	if !removed {
		return lms.NotFoundf("%s %d is not in bundle %d", it.Kind, it.ID, bundleID)
	}
	return a.answerBundle(w, r, c, bundleID, "Item removed from bundle")
}

func (a *API) answerBundle(w http.ResponseWriter, r *http.Request, c *call, id int64, msg string) error {
	b, err := a.Store.Bundle(r.Context(), c.Domain.ID, id)
	if err != nil {
		return err
	}
	return ok(w, msg, bundleJSON(b))
}
