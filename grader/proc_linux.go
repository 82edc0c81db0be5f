package grader

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// groupAttrs starts the test binary in a process group of its own, so that
// killGroup reaches everything it spawns, and has the kernel kill it if the
// grader dies first.
func groupAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// spinningThread returns the thread of process pid that is running or
// runnable and has used the most CPU time, or 0 when none is (a hang
// that waits rather than spins) or /proc cannot tell.
func spinningThread(pid int) int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	best, bestTime := 0, int64(-1)
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(dir + "/" + t.Name() + "/stat")
		if err != nil {
			continue
		}
		state, cpu, ok := threadStat(string(stat))
		if ok && state == "R" && cpu > bestTime {
			best, bestTime = tid, cpu
		}
	}
	return best
}

// threadStat reads a thread's state and CPU time (user and system, in
// clock ticks) from the text of its /proc/PID/task/TID/stat.
func threadStat(stat string) (state string, cpu int64, ok bool) {
	// The command name, in parentheses, may hold spaces and parentheses:
	// the fields that follow start after the last ")".
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return "", 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return f[0], utime + stime, true
}

// signalThread sends sig to thread tid of process pid.
func signalThread(pid, tid int, sig syscall.Signal) error {
	return syscall.Tgkill(pid, tid, sig)
}
