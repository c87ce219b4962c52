package lmsapi_test

import (
	"net/http"
	"testing"

	. "github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/config"
)

// TestAltAddr: with --alt-addr the same API, products included, answers on
// a second address (deployments that keep the products' second host name).
func TestAltAddr(t *testing.T) {
	Run(t, func(t *testing.T, e *Env) {
		addrs := e.Main.Addrs()
		if len(addrs) != 2 {
			t.Fatalf("listeners: %v", addrs)
		}
		alt := "http://" + addrs[1]
		for _, path := range []string{"/api/v1/products/list", "/api/v1/products/product-categories"} {
			req, _ := http.NewRequest("GET", alt+path, nil)
			req.Header.Set("Authorization", e.Domain.LMSKey)
			req.Header.Set("x-domain-id", itoa(e.Domain.ID))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET %s on the alternate address: %d", path, resp.StatusCode)
			}
		}
	}, func(c *config.Config) { c.AltAddr = "127.0.0.1:0" })
}
