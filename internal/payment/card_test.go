package payment

import (
	"strings"
	"testing"
	"time"
)

func TestReadCard(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		number, month, year, cvc string
		wantErr                  string
		wantNumber               string
		wantYear                 int
	}{
		{"spaces", "4242 4242 4242 4242", "12", "2040", "123", "", "4242424242424242", 2040},
		{"dashes, two-digit year", "4000-0000-0000-0002", "1", "31", "1234", "", "4000000000000002", 2031},
		{"luhn", "4242424242424241", "12", "2040", "123", "card_number is not a valid card number", "", 0},
		{"letters", "4242x", "12", "2040", "123", "card_number must be 12 to 19 digits", "", 0},
		{"missing", "", "", "", "", "card_cvc is required; card_exp_month is required; card_exp_year is required; card_number is required", "", 0},
		{"month", "4242424242424242", "0", "2040", "123", "card_exp_month must be a month", "", 0},
		{"year", "4242424242424242", "12", "204", "123", "card_exp_year must be a year", "", 0},
		{"cvc", "4242424242424242", "12", "2040", "12", "card_cvc must be 3 or 4 digits", "", 0},
	} {
		c, err := ReadCard(tc.number, tc.month, tc.year, tc.cvc, "")
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.wantErr)
			}
			if err != nil && len(tc.number) > 8 && strings.Contains(err.Error(), tc.number) {
				t.Errorf("%s: the error repeats the number", tc.name)
			}
			continue
		}
		if err != nil || c.Number != tc.wantNumber || c.ExpYear != tc.wantYear {
			t.Errorf("%s: %+v %v", tc.name, c, err)
		}
	}
}

func TestTestCardOutcome(t *testing.T) {
	now := time.Date(2030, 6, 15, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		number      string
		month, year int
		want        string // "" for success, else the decline code
	}{
		{"4242424242424242", 12, 2040, ""},
		{"5555555555554444", 12, 2040, ""},
		{"4000000000000002", 12, 2040, "card_declined"},
		{"4000000000009995", 12, 2040, "insufficient_funds"},
		{"4000000000000127", 12, 2040, "incorrect_cvc"},
		{"4000000000000069", 12, 2040, "expired_card"},
		{"4242424242424242", 6, 2030, ""},             // valid through June
		{"4242424242424242", 5, 2030, "expired_card"}, // ended with May
		{"4111111111111111", 12, 2040, "card_declined"},
	} {
		d := TestCardOutcome(Card{Number: tc.number, ExpMonth: tc.month, ExpYear: tc.year, CVC: "123"}, now)
		got := ""
		if d != nil {
			got = d.Code
			if d.Reason == "" || !strings.HasSuffix(d.Reason, ".") {
				t.Errorf("%s: reason %q is not plain words", tc.number, d.Reason)
			}
		}
		if got != tc.want {
			t.Errorf("%s %d/%d: %q, want %q", tc.number, tc.month, tc.year, got, tc.want)
		}
	}
}

func TestCardKeptOutOfLogs(t *testing.T) {
	c := Card{Number: "4242424242424242", CVC: "123"}
	for _, s := range []string{c.String(), c.LogValue().String()} {
		if strings.Contains(s, "424242424242") || strings.Contains(s, "123") || !strings.Contains(s, "4242") {
			t.Errorf("%q", s)
		}
	}
}
