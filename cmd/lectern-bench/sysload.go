package main

import (
	"os"
	"strings"
)

// loadAverage returns the machine's 1, 5 and 15 minute load averages where
// the system reports them (Linux), for the record: the numbers of a shared
// machine are only comparable as ratios.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
