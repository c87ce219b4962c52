package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/loadtest"
)

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-students", "10,x"}, `"x" is not a positive number`},
		{[]string{"-students", "0"}, `"0" is not a positive number`},
		{[]string{"-bin", "/nonexistent/lectern"}, "-bin"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tc.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v; want an error containing %s", tc.args, err, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("run(%q) printed %q", tc.args, out.String())
		}
	}
}

func TestRow(t *testing.T) {
	r := loadtest.Result{Students: 100, Joined: 100, Connected: 100, CPUs: 2,
		Video:  loadtest.Stream{SentPerSec: 126, MeanPerSec: 126, MinPerSec: 125},
		Audio:  loadtest.Stream{SentPerSec: 50, MeanPerSec: 50, MinPerSec: 50},
		Server: loadtest.Process{CPU: 0.528, RSSMiB: 300, PeakRSSMiB: 310},
		Tool:   loadtest.Process{CPU: 0.6}, MachineCPU: 1.2}
	got := row(r)
	// 0.528 cores over 100 × 176 packets a second is 30 µs a packet;
	// other processes: 1.2 - 0.528 - 0.6.
	for _, want := range []string{"| 100 | 100 / 100 |", "| 0.53 | 30.0 | 300 / 310 |", "| 1.20 of 2 | 0.07 |"} {
		if !strings.Contains(got, want) {
			t.Errorf("row = %s\nwant it to contain %s", got, want)
		}
	}
	if cols, head := strings.Count(got, "|"), strings.Count(strings.SplitN(header, "\n", 2)[0], "|"); cols != head {
		t.Errorf("row has %d separators, header %d", cols, head)
	}
}
