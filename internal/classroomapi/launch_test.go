package classroomapi_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/apitest"
)

var start = time.Date(2031, 3, 10, 15, 0, 0, 0, time.UTC)

func launchParams(class string, teacher string) url.Values {
	return url.Values{"class_id": {class}, "userId": {"u-1"}, "userName": {"Ann <Lee>"}, "isTeacher": {teacher},
		"lessonName": {"Lesson 1"}, "courseName": {"Maths & Art"}}
}

func fetch(t *testing.T, e *apitest.Env, rawURL string, header map[string]string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", rawURL, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// bootData reads the classroom page's start-up JSON.
func bootData(t *testing.T, page string) map[string]any {
	t.Helper()
	_, after, ok := strings.Cut(page, `<script id="lectern-boot" type="application/json">`)
	raw, _, ok2 := strings.Cut(after, "</script>")
	var boot map[string]any
	if !ok || !ok2 || json.Unmarshal([]byte(raw), &boot) != nil {
		t.Fatalf("no boot data in page:\n%s", page)
	}
	return boot
}

func TestGetClassLaunch(t *testing.T) {
	apitest.Run(t, func(t *testing.T, e *apitest.Env) {
		c := makeClass(t, e, e.Domain, "A & B <C>", start)
		id := itoa(c.ID)

		t.Run("student before the class opens", func(t *testing.T) {
			e.Clock.Set(start.Add(-11 * time.Minute))
			r := e.VC("getclasslaunch", launchParams(id, "0"))
			if apitest.Str(t, r.JSON(t), "0.error") != "Class is upcoming" {
				t.Fatalf("%s", r.Body)
			}
		})
		t.Run("teacher any time before the class ends", func(t *testing.T) {
			for _, early := range []time.Duration{31 * time.Minute, 72 * time.Hour} {
				e.Clock.Set(start.Add(-early))
				r := e.VC("getclasslaunch", launchParams(id, "1"))
				if apitest.Str(t, r.JSON(t), "0.status") != "ok" {
					t.Fatalf("teacher %s early: %s", early, r.Body)
				}
			}
			e.Clock.Set(start.Add(-10*time.Minute - time.Second))
			r := e.VC("getclasslaunch", launchParams(id, "0"))
			if apitest.Str(t, r.JSON(t), "0.error") != "Class is upcoming" {
				t.Fatalf("student just over 10 minutes early: %s", r.Body)
			}
		})
		for _, role := range []struct{ name, flag string }{{"teacher", "1"}, {"student", "0"}} {
			t.Run("both URLs open the page as "+role.name, func(t *testing.T) {
				e.Clock.Set(start.Add(-5 * time.Minute))
				r := e.VC("getclasslaunch", launchParams(id, role.flag))
				body := r.JSON(t)
				if apitest.Str(t, body, "0.method") != "getclasslaunch" || apitest.Str(t, body, "0.class_id") != id {
					t.Fatalf("%s", r.Body)
				}
				plain, enc := apitest.Str(t, body, "0.launchurl"), apitest.Str(t, body, "0.encryptedlaunchurl")
				if !strings.HasPrefix(plain, e.URL+"/classroom/"+id+"?") || !strings.Contains(plain, "userId=u-1") {
					t.Errorf("plain url %s", plain)
				}
				// The parameters in clear, not their values alone: a short
				// value such as "u-1" turns up in random base64 now and then.
				if !strings.HasPrefix(enc, e.URL+"/classroom/e/") || strings.Contains(enc, "userId=") || strings.Contains(enc, "userName=") || strings.Contains(enc, "u-1&") {
					t.Errorf("encrypted url shows its contents: %s", enc)
				}
				for _, u := range []string{plain, enc} {
					status, page, _ := fetch(t, e, u, nil)
					if status != 200 {
						t.Fatalf("%s: %d %s", u, status, page)
					}
					boot := bootData(t, page)
					if boot["title"] != "A & B <C>" || boot["userName"] != "Ann <Lee>" || boot["role"] != role.name ||
						boot["ws"] != "/classroom/ws" || boot["session"] == "" {
						t.Errorf("boot data %v", boot)
					}
					if strings.Contains(page, "<C>") || strings.Contains(page, "<Lee>") {
						t.Errorf("page shows markup from the launch unescaped:\n%s", page)
					}
				}
				// Tampering: claim the other role, or change a signed byte.
				other := "teacher"
				if role.name == "teacher" {
					other = "student"
				}
				tampered := strings.Replace(plain, "role="+role.name, "role="+other, 1)
				if status, page, _ := fetch(t, e, tampered, nil); status != 403 || !strings.Contains(page, "not valid") || strings.Contains(page, "A &amp; B") {
					t.Errorf("tampered plain url: %d %s", status, page)
				}
				if status, page, _ := fetch(t, e, enc[:len(enc)-3]+"AAA", nil); status != 403 || strings.Contains(page, "A &amp; B") {
					t.Errorf("tampered encrypted url: %d %s", status, page)
				}
				// Expired: the link works until an hour after the sitting (isExtend 0).
				e.Clock.Set(start.Add(2*time.Hour + time.Second))
				for _, u := range []string{plain, enc} {
					if status, page, _ := fetch(t, e, u, nil); status != 403 || !strings.Contains(page, "expired") {
						t.Errorf("expired link: %d %s", status, page)
					}
				}
			})
		}
		t.Run("isExtend 1 ends the link with the class", func(t *testing.T) {
			e.Clock.Set(start)
			p := launchParams(id, "1")
			p.Set("isExtend", "1")
			plain := apitest.Str(t, e.VC("getclasslaunch", p).JSON(t), "0.launchurl")
			e.Clock.Set(start.Add(time.Hour))
			if status, _, _ := fetch(t, e, plain, nil); status != 403 {
				t.Errorf("isExtend 1 link after the class: %d", status)
			}
		})
		t.Run("user_id alias, request styles and XML", func(t *testing.T) {
			e.Clock.Set(start)
			p := launchParams(id, "0")
			p.Del("userId")
			p.Set("user_id", "u-9")
			for name, a := range styles(t, e, "getclasslaunch", p) {
				if u := apitest.Str(t, a, "0.launchurl"); !strings.Contains(u, "userId=u-9") {
					t.Errorf("%s: %s", name, u)
				}
			}
			p.Set("format", "xml")
			r := e.VC("getclasslaunch", p)
			var rsp struct {
				Status    string `xml:"status,attr"`
				Method    string `xml:"method"`
				ClassID   string `xml:"class_id"`
				LaunchURL string `xml:"launchurl"`
			}
			if err := xml.Unmarshal(r.Body, &rsp); err != nil || rsp.Status != "ok" || rsp.Method != "getclasslaunch" ||
				rsp.ClassID != id || !strings.Contains(rsp.LaunchURL, "&") {
				t.Fatalf("xml %+v %v: %s", rsp, err, r.Body)
			}
		})
		t.Run("compat style is a bare object", func(t *testing.T) {
			e.Clock.Set(start)
			e.Store.SetResponseStyle(context.Background(), e.Domain.ID, "compat")
			defer e.Store.SetResponseStyle(context.Background(), e.Domain.ID, "")
			body := e.VC("getclasslaunch", launchParams(id, "0")).JSON(t)
			if apitest.Str(t, body, "status") != "ok" || apitest.Str(t, body, "class_id") != id {
				t.Fatalf("%v", body)
			}
			bad := e.VC("getclasslaunch", url.Values{"class_id": {id}}).JSON(t)
			if apitest.Str(t, bad, "status") != "error" || apitest.Str(t, bad, "error") != "userId is required" {
				t.Fatalf("%v", bad)
			}
		})
		t.Run("errors name the parameter", func(t *testing.T) {
			e.Clock.Set(start)
			for param, want := range map[string]string{
				"class_id": "class_id is required", "userName": "userName is required", "isTeacher": "isTeacher is required",
				"lessonName": "lessonName is required", "courseName": "courseName is required", "userId": "userId is required",
			} {
				p := launchParams(id, "0")
				p.Del(param)
				if got := apitest.Str(t, e.VC("getclasslaunch", p).JSON(t), "0.error"); got != want {
					t.Errorf("without %s: %q", param, got)
				}
			}
			p := launchParams(id, "2")
			if got := apitest.Str(t, e.VC("getclasslaunch", p).JSON(t), "0.error"); !strings.Contains(got, "isTeacher must be 0 or 1") {
				t.Errorf("isTeacher 2: %q", got)
			}
			p = launchParams("abc", "0")
			if got := apitest.Str(t, e.VC("getclasslaunch", p).JSON(t), "0.error"); !strings.Contains(got, "class_id must be a positive whole number") {
				t.Errorf("class_id abc: %q", got)
			}
		})
		t.Run("another domain's class", func(t *testing.T) {
			oc := makeClass(t, e, e.Other, "Theirs", start)
			if got := apitest.Str(t, e.VC("getclasslaunch", launchParams(itoa(oc.ID), "1")).JSON(t), "0.error"); got != "Invalid Class Owner" {
				t.Fatalf("%q", got)
			}
		})
		t.Run("past and cancelled classes", func(t *testing.T) {
			e.Clock.Set(start.Add(3 * time.Hour))
			if got := apitest.Str(t, e.VC("getclasslaunch", launchParams(id, "1")).JSON(t), "0.error"); !strings.HasPrefix(got, "Class is over") {
				t.Errorf("past: %q", got)
			}
			cc := makeClass(t, e, e.Domain, "Cancelled", start.Add(24*time.Hour))
			if err := cancelAll(e, cc.ID); err != nil {
				t.Fatal(err)
			}
			if got := apitest.Str(t, e.VC("getclasslaunch", launchParams(itoa(cc.ID), "1")).JSON(t), "0.error"); got != "Class is cancelled" {
				t.Errorf("cancelled: %q", got)
			}
		})
	}, seedStyle)
}
