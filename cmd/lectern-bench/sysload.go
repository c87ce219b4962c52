package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
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

// serverCPU is the measured server's CPU time so far, for a scenario sent
// to it with -server-pid; 0 otherwise (the bare handlers run in this
// process, or with -apart in another).
func serverCPU(c config, s scenario) (time.Duration, error) {
	if c.ServerPID <= 0 || s.baseline == "" || s.apart() {
		return 0, nil
	}
	return processCPU(c.ServerPID)
}

// processCPU is the user and system CPU time process pid has used, from
// /proc/PID/stat (Linux; clock ticks of 1/100 s, the kernel's USER_HZ).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// utime and stime are fields 14 and 15, the 12th and 13th after it.
	var f []string
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 {
		f = strings.Fields(string(b[i+1:]))
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("process %d: unexpected /proc stat line", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("process %d: unexpected /proc stat line", pid)
	}
	return time.Duration(utime+stime) * (time.Second / 100), nil
}
