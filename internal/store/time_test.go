package store

import (
	"math/rand/v2"
	"testing"
	"time"
)

// parseTime must agree with time.Parse(timeFormat) on every input: the same
// instant for a valid one, an error for an invalid one.
func TestParseTimeAgreesWithTimeParse(t *testing.T) {
	inputs := []string{
		"2026-11-23T20:30:00Z", "2000-02-29T23:59:59Z", "1900-02-29T00:00:00Z", "2024-02-29T12:00:00Z",
		"2023-02-29T12:00:00Z", "2026-04-31T00:00:00Z", "2026-12-31T23:59:59Z", "0000-01-01T00:00:00Z",
		"2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z",
		"2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00+",
		"2026-1-01T00:00:00Z", "2026-01-01T00:00:00", "", "abcd-ef-ghTij:kl:mnZ", "+026-01-01T00:00:00Z",
		"2026-01-01T00:00:00.5Z", "9999-12-31T23:59:59Z",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		inputs = append(inputs, time.Unix(r.Int64N(1<<35)-1<<34, 0).UTC().Format(timeFormat))
	}
	for _, s := range inputs {
		got, gotErr := parseTime(s)
		want, wantErr := time.Parse(timeFormat, s)
		if (gotErr != nil) != (wantErr != nil) || !got.Equal(want) || got.Location() != want.Location() {
			t.Errorf("parseTime(%q) = %v, %v; time.Parse: %v, %v", s, got, gotErr, want, wantErr)
		}
	}
}

func BenchmarkParseTime(b *testing.B) {
	for b.Loop() {
		if _, err := parseTime("2026-11-23T20:30:00Z"); err != nil {
			b.Fatal(err)
		}
	}
}
