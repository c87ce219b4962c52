package loadtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of the CPU times in /proc/<pid>/stat and
// /proc/stat (USER_HZ). Linux reports them in 1/100 s on every
// architecture Go supports, whatever the kernel's internal HZ.
const clockTicks = 100

// procSample is a reading of one process's CPU time and memory.
type procSample struct {
	at       time.Time
	cpu      time.Duration // user + system time since the process started
	rss, hwm uint64        // resident set now and at its peak, in bytes
}

// readProc reads /proc/<pid>/stat and /proc/<pid>/status; pid "self" is
// this process.
func readProc(pid string) (procSample, error) {
	s := procSample{at: time.Now()}
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return s, err
	}
	if s.cpu, err = parseStatCPU(stat); err != nil {
		return s, fmt.Errorf("/proc/%s/stat: %w", pid, err)
	}
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return s, err
	}
	if s.rss, s.hwm, err = parseStatusMemory(status); err != nil {
		return s, fmt.Errorf("/proc/%s/status: %w", pid, err)
	}
	return s, nil
}

// parseStatCPU returns utime + stime from the contents of /proc/<pid>/stat.
// The second field, the command name in parentheses, may itself contain
// spaces and parentheses, so fields are counted from the last ')'.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("no command name")
	}
	// After ")": state (field 3), ppid (4), ... utime (14), stime (15).
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("too few fields")
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return ticks(utime + stime), nil
}

// parseStatusMemory returns VmRSS and VmHWM, in bytes, from the contents of
// /proc/<pid>/status.
func parseStatusMemory(b []byte) (rss, hwm uint64, err error) {
	var haveRSS, haveHWM bool
	for line := range strings.Lines(string(b)) {
		key, val, ok := strings.Cut(line, ":")
		if !ok || key != "VmRSS" && key != "VmHWM" {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("unexpected %s line %q", key, strings.TrimSpace(line))
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", key, err)
		}
		if key == "VmRSS" {
			rss, haveRSS = n<<10, true
		} else {
			hwm, haveHWM = n<<10, true
		}
	}
	if !haveRSS || !haveHWM {
		return 0, 0, errors.New("no VmRSS or VmHWM (a kernel thread, or a process that has exited?)")
	}
	return rss, hwm, nil
}

// machineSample is a reading of the whole machine's CPU time from the
// "cpu" line of /proc/stat.
type machineSample struct {
	at         time.Time
	busy, idle time.Duration // summed over all CPUs; idle includes iowait
}

func readMachine() (machineSample, error) {
	s := machineSample{at: time.Now()}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	s.busy, s.idle, err = parseMachineStat(b)
	if err != nil {
		return s, fmt.Errorf("/proc/stat: %w", err)
	}
	return s, nil
}

// parseMachineStat reads the aggregate "cpu" line of /proc/stat: user nice
// system idle iowait irq softirq steal [guest guest_nice]. Guest time is
// already included in user and nice, so it is not added again.
func parseMachineStat(b []byte) (busy, idle time.Duration, err error) {
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 9 {
			return 0, 0, errors.New("short cpu line")
		}
		var v [8]uint64
		for i := range v {
			if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
				return 0, 0, err
			}
		}
		idleTicks := v[3] + v[4]
		busyTicks := v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
		return ticks(busyTicks), ticks(idleTicks), nil
	}
	return 0, 0, errors.New("no cpu line")
}

func ticks(n uint64) time.Duration { return time.Duration(n) * (time.Second / clockTicks) }

// cores is the CPU time used between two readings divided by the wall time
// between them: 1.0 is one core fully busy.
func cores(cpu time.Duration, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds()
}

// mib converts bytes to mebibytes.
func mib(b uint64) float64 { return float64(b) / (1 << 20) }
