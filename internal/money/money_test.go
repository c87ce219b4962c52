package money_test

import (
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/money"
)

func TestParse(t *testing.T) {
	good := []struct {
		in   string
		want money.Money
		out  string
	}{
		{"19.99", 1999, "19.99"},
		{" 19.99 ", 1999, "19.99"},
		{"19.9", 1990, "19.90"},
		{"19", 1900, "19.00"},
		{"19.00", 1900, "19.00"},
		{"0", 0, "0.00"},
		{"0.05", 5, "0.05"},
		{"0.5", 50, "0.50"},
		{"007.50", 750, "7.50"},
		{"0.29", 29, "0.29"}, // 0.29*100 is 28.999999999999996 as a float
		{"1234567.89", 123456789, "1234567.89"},
		{"999999999999.99", money.Max, "999999999999.99"},
	}
	for _, g := range good {
		m, err := money.Parse(g.in)
		if err != nil || m != g.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", g.in, m, err, g.want)
			continue
		}
		if m.String() != g.out {
			t.Errorf("Money(%d).String() = %q, want %q", m, m.String(), g.out)
		}
		if b, _ := m.MarshalJSON(); string(b) != g.out {
			t.Errorf("Money(%d).MarshalJSON() = %s, want %s", m, b, g.out)
		}
	}
	bad := []struct{ in, msg string }{
		{"19.999", "at most two decimals"},
		{"19.990", "at most two decimals"},
		{"-1", "must not be negative"},
		{"-0.01", "must not be negative"},
		{"1e2", "exponent"},
		{"1.5E1", "exponent"},
		{"abc", "amount such as 19.99"},
		{"", "amount such as 19.99"},
		{"19.", "amount such as 19.99"},
		{".5", "amount such as 19.99"},
		{"+5", "amount such as 19.99"},
		{"1,5", "amount such as 19.99"},
		{"1 000", "amount such as 19.99"},
		{"true", "amount such as 19.99"},
		{"NaN", "amount such as 19.99"},
		{"Inf", "amount such as 19.99"},
		{"0x10", "amount such as 19.99"},
		{"1000000000000", "at most"},
	}
	for _, b := range bad {
		m, err := money.Parse(b.in)
		if err == nil {
			t.Errorf("Parse(%q) = %d, want an error", b.in, m)
			continue
		}
		if !strings.Contains(err.Error(), b.msg) {
			t.Errorf("Parse(%q) error %q does not say %q", b.in, err, b.msg)
		}
	}
	if s := money.Money(-5).String(); s != "-0.05" {
		t.Errorf("Money(-5) = %q, want -0.05", s)
	}
}

func TestParsePercent(t *testing.T) {
	good := []struct {
		in   string
		want money.Percent
		out  string
	}{
		{"12.5", 1250, "12.50"},
		{"12.50", 1250, "12.50"},
		{"100", 10000, "100.00"},
		{"100.00", 10000, "100.00"},
		{"0.01", 1, "0.01"},
		{"33.33", 3333, "33.33"},
		{"0", 0, "0.00"},
	}
	for _, g := range good {
		p, err := money.ParsePercent(g.in)
		if err != nil || p != g.want {
			t.Errorf("ParsePercent(%q) = %d, %v; want %d", g.in, p, err, g.want)
			continue
		}
		if b, _ := p.MarshalJSON(); string(b) != g.out {
			t.Errorf("Percent(%d) JSON = %s, want %s", p, b, g.out)
		}
	}
	bad := []struct{ in, msg string }{
		{"100.01", "at most 100"},
		{"12.345", "at most two decimals"},
		{"-1", "must not be negative"},
		{"x", "percentage such as 12.5"},
		{"1e1", "exponent"},
	}
	for _, b := range bad {
		p, err := money.ParsePercent(b.in)
		if err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("ParsePercent(%q) = %d, %v; want an error saying %q", b.in, p, err, b.msg)
		}
	}
}
