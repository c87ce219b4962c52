package payment

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/money"
	"github.com/lectern-lms/lectern/internal/store"
)

// The test gateway's hosted checkout page stands in for a provider's
// checkout page in the redirect flow: it shows the order and a card form
// (filled with 4242 4242 4242 4242) and completes the order itself, as a
// provider's webhook would. A declined test card leaves the order pending
// and shows the reason, so another card can be tried; Cancel fails the
// order and returns the buyer to the cancel URL.

var testPage = template.Must(template.New("checkout").Funcs(pageFuncs).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Test checkout</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0;padding:2rem 1rem}
main{max-width:26rem;margin:0 auto;background:#fff;border-radius:10px;box-shadow:0 2px 12px rgba(0,0,0,.08);padding:1.5rem 1.75rem}
.banner{background:#fff4d6;color:#6b4e00;border-radius:6px;padding:.5rem .75rem;font-size:.85rem;margin-bottom:1rem}
table{width:100%;border-collapse:collapse;margin:.5rem 0 1rem}td{padding:.3rem 0}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{border-top:1px solid #dde1e7;font-weight:600;padding-top:.5rem}
label{display:block;font-size:.85rem;margin:.6rem 0 .2rem}input{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #c4cad3;border-radius:6px;font-size:1rem}
.row{display:flex;gap:.75rem}.row>div{flex:1}
button{margin-top:1rem;width:100%;padding:.7rem;border:0;border-radius:6px;font-size:1rem;cursor:pointer}
.pay{background:#2b59c3;color:#fff}.cancel{background:#e8ebf0;color:#1d2330}
.error{background:#fde8e8;color:#8a1c1c;border-radius:6px;padding:.5rem .75rem;margin:.75rem 0}
.done{font-size:1.1rem}
</style></head><body><main>
<div class="banner">Test payment: no money moves. Test cards: 4242 4242 4242 4242 succeeds; 4000 0000 0000 0002 is declined.</div>
<h1>Order {{.Order.ID}}</h1>
<table>{{range .Order.Lines}}<tr><td>{{.Name}}</td><td class="n">{{money .Amount}}</td></tr>{{end}}
<tr class="total"><td>Total</td><td class="n">{{money .Order.Total}} {{upper .Order.Currency}}</td></tr></table>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if eq .Order.Status "pending"}}
<form method="post">
<label for="card_number">Card number</label><input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" value="4242 4242 4242 4242">
<div class="row"><div><label for="card_exp_month">Month</label><input id="card_exp_month" name="card_exp_month" value="12"></div>
<div><label for="card_exp_year">Year</label><input id="card_exp_year" name="card_exp_year" value="{{.Year}}"></div>
<div><label for="card_cvc">CVC</label><input id="card_cvc" name="card_cvc" value="123"></div></div>
<button class="pay" name="action" value="pay">Pay {{money .Order.Total}} {{upper .Order.Currency}}</button>
<button class="cancel" name="action" value="cancel">Cancel</button>
</form>
{{else}}<p class="done">This order is {{.Order.Status}}.{{if .Order.FailureReason}} {{.Order.FailureReason}}{{end}}</p>{{end}}
</main></body></html>
`))

var pageFuncs = template.FuncMap{
	"money": func(n int64) string { return money.Money(n).String() },
	"upper": strings.ToUpper,
}

func (s *Service) testSession(r *http.Request) (int64, store.Order, error) {
	domainID, err := strconv.ParseInt(r.PathValue("domain_id"), 10, 64)
	if err != nil {
		return 0, store.Order{}, lms.NotFoundf("checkout not found")
	}
	if err := s.expireTestCheckouts(context.WithoutCancel(r.Context()), domainID); err != nil {
		return 0, store.Order{}, err
	}
	o, err := s.Store.OrderByCheckout(r.Context(), domainID, r.PathValue("session"))
	if err == nil && o.Gateway != "test" {
		err = lms.NotFoundf("checkout not found")
	}
	return domainID, o, err
}

func (s *Service) renderTestPage(w http.ResponseWriter, status int, o store.Order, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	testPage.Execute(w, map[string]any{"Order": o, "Error": msg, "Year": s.now().Year() + 3})
}

func (s *Service) testCheckoutPage(w http.ResponseWriter, r *http.Request) {
	_, o, err := s.testSession(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.renderTestPage(w, http.StatusOK, o, "")
}

func (s *Service) testCheckoutSubmit(w http.ResponseWriter, r *http.Request) {
	domainID, o, err := s.testSession(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	if o.Status != store.OrderPending {
		s.renderTestPage(w, http.StatusConflict, o, "")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		s.renderTestPage(w, http.StatusBadRequest, o, "The form could not be read.")
		return
	}
	ctx := context.WithoutCancel(r.Context())
	if r.PostForm.Get("action") == "cancel" {
		o, err = s.FailCheckout(ctx, domainID, o.CheckoutID, "The buyer cancelled the checkout.")
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		s.finish(w, r, o, o.CancelURL)
		return
	}
	card, err := ReadCard(r.PostForm.Get("card_number"), r.PostForm.Get("card_exp_month"), r.PostForm.Get("card_exp_year"),
		r.PostForm.Get("card_cvc"), "")
	if err != nil {
		s.renderTestPage(w, http.StatusBadRequest, o, err.Error())
		return
	}
	if d := TestCardOutcome(card, s.now()); d != nil {
		s.renderTestPage(w, http.StatusPaymentRequired, o, d.Reason)
		return
	}
	o, err = s.CompleteCheckout(ctx, domainID, o.CheckoutID, "ch_test_"+randomID())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.finish(w, r, o, o.ReturnURL)
}

// finish sends the buyer back to the client site, or shows the outcome
// when the site gave no address.
func (s *Service) finish(w http.ResponseWriter, r *http.Request, o store.Order, to string) {
	if to != "" {
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	s.renderTestPage(w, http.StatusOK, o, "")
}

func (s *Service) pageError(w http.ResponseWriter, r *http.Request, err error) {
	var le *lms.Error
	if errors.As(err, &le) && le.Code == lms.CodeNotFound {
		http.Error(w, "This checkout does not exist.", http.StatusNotFound)
		return
	}
	s.Logger.Error("test checkout", "request_id", httpx.RequestInfo(r.Context()).RequestID, "err", err)
	http.Error(w, "internal server error", http.StatusInternalServerError)
}
