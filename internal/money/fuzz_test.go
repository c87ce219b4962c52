package money_test

import (
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/money"
)

// plainDecimal is Parse's documented grammar: digits, then optionally a
// point and one or two digits. No sign, exponent, or bare point.
var plainDecimal = regexp.MustCompile(`^[0-9]+(\.[0-9]{1,2})?$`)

var moneySeeds = []string{"19.99", " 19.99 ", "19.9", "0", "0.05", "007.50", "0.29", "999999999999.99",
	"1000000000000", "9223372036854775807", "92233720368547758.07", "2147483648", "-0", "-0.00", "-1", "+1",
	"1e3", "1E-2", "Inf", "NaN", "0x10", ".5", "5.", "1.234", "1,50", "١٢", "1.5\x00", "\xff1", "1 000", "00000000000000000001.00"}

// hundredths is the exact value of decimal text s in hundredths, computed
// apart from the package (with math/big).
func hundredths(t *testing.T, s string) *big.Int {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok {
		t.Fatalf("%q does not read as a rational", s)
	}
	r.Mul(r, big.NewRat(100, 1))
	if !r.IsInt() {
		t.Fatalf("%q has more than two decimals", s)
	}
	return r.Num()
}

func FuzzParse(f *testing.F) {
	for _, s := range moneySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := money.Parse(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("Parse(%q): an empty error", s)
			}
			return
		}
		if !plainDecimal.MatchString(strings.TrimSpace(s)) {
			t.Fatalf("Parse(%q) = %v: accepted text outside the documented form", s, m)
		}
		if m < 0 || m > money.Max {
			t.Fatalf("Parse(%q) = %d, outside 0..Max", s, m)
		}
		if want := hundredths(t, s); want.Cmp(big.NewInt(int64(m))) != 0 {
			t.Fatalf("Parse(%q) = %d hundredths, want %s", s, m, want)
		}
		back, err := money.Parse(m.String())
		if err != nil || back != m {
			t.Fatalf("Parse(String(%d) = %q) = %d, %v", m, m.String(), back, err)
		}
		if j, _ := m.MarshalJSON(); string(j) != m.String() {
			t.Fatalf("MarshalJSON(%d) = %s, String %s", m, j, m.String())
		}
	})
}

func FuzzParsePercent(f *testing.F) {
	for _, s := range append(moneySeeds, "100", "100.00", "100.01", "12.5", "0.01") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := money.ParsePercent(s)
		if err != nil {
			return
		}
		if !plainDecimal.MatchString(strings.TrimSpace(s)) || p < 0 || p > money.Hundred {
			t.Fatalf("ParsePercent(%q) = %d: outside the documented form or 0..100", s, p)
		}
		if want := hundredths(t, s); want.Cmp(big.NewInt(int64(p))) != 0 {
			t.Fatalf("ParsePercent(%q) = %d hundredths, want %s", s, p, want)
		}
		if back, err := money.ParsePercent(p.String()); err != nil || back != p {
			t.Fatalf("ParsePercent(String(%d) = %q) = %d, %v", p, p.String(), back, err)
		}
	})
}

// FuzzString: every amount in range writes as text Parse reads back, and
// every amount writes with exactly two decimals.
func FuzzString(f *testing.F) {
	for _, n := range []int64{0, 1, 99, 100, 1999, int64(money.Max), int64(money.Max) + 1, -1, -1 << 63, 1<<63 - 1} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		s := money.Money(n).String()
		whole, frac, ok := strings.Cut(strings.TrimPrefix(s, "-"), ".")
		if !ok || len(frac) != 2 || whole == "" || (n < 0) != strings.HasPrefix(s, "-") {
			t.Fatalf("String(%d) = %q", n, s)
		}
		if want := new(big.Rat).SetFrac(big.NewInt(n), big.NewInt(100)); want.FloatString(2) != s {
			t.Fatalf("String(%d) = %q, want %s", n, s, want.FloatString(2))
		}
		if n < 0 || n > int64(money.Max) {
			if _, err := money.Parse(s); err == nil {
				t.Fatalf("Parse(%q) accepted an amount outside 0..Max", s)
			}
			return
		}
		if back, err := money.Parse(s); err != nil || int64(back) != n {
			t.Fatalf("Parse(%q) = %d, %v; want %d", s, back, err, n)
		}
	})
}
