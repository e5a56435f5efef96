//go:build unix

package run_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
)

// processGone waits (poll.Try) for the process to be gone (or a zombie
// reaped by nobody, which counts as exited).
func processGone(pid int) bool {
	return poll.Try(func() bool {
		if err := syscall.Kill(pid, 0); err != nil {
			return true
		}
		b, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "stat"))
		f := strings.Fields(string(b))
		return err == nil && len(f) > 2 && f[2] == "Z"
	})
}

// groupGone waits (poll.Try) for every process of the group to be gone.
func groupGone(pgid int) bool {
	return poll.Try(func() bool { return syscall.Kill(-pgid, 0) != nil })
}

// cpuUsage returns the CPU time used by this process and by its waited-for
// children so far.
func cpuUsage() (self, children time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	children = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return self, children
}

// leftoverProcesses lists the live processes (not zombies) whose command
// line starts with binary.
func leftoverProcesses(binary string) []int {
	return liveProcesses(func(cmdline string) bool { return strings.HasPrefix(cmdline, binary+"\x00") })
}

// processesGone waits (poll.Try) for every live process whose command
// line holds marker to be gone.
func processesGone(marker string) bool {
	return poll.Try(func() bool {
		return len(liveProcesses(func(cmdline string) bool { return strings.Contains(cmdline, marker) })) == 0
	})
}

// liveProcesses lists the live processes (not zombies) whose NUL-separated
// command line matches.
func liveProcesses(match func(cmdline string) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !match(string(cmdline)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// rssMB returns the resident memory of this process and of every live
// process whose command line holds marker, summed, in MiB (VmRSS).
func rssMB(marker string) float64 {
	kb := vmRSSKB("self")
	if marker != "" {
		for _, pid := range liveProcesses(func(cmdline string) bool { return strings.Contains(cmdline, marker) }) {
			kb += vmRSSKB(strconv.Itoa(pid))
		}
	}
	return float64(kb) / 1024
}

// vmRSSKB reads VmRSS of /proc/PID/status, in KiB; 0 when gone.
func vmRSSKB(pid string) int64 {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// processCount counts the live processes whose command line holds marker.
func processCount(marker string) int {
	return len(liveProcesses(func(cmdline string) bool { return strings.Contains(cmdline, marker) }))
}
