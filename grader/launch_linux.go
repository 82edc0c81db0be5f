package grader

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// launchEnv is the private environment variable that turns a process of
// any program importing the grader (labctl, the grader's own tests) into
// the launcher: a copy of the grader, started by it without bubblewrap,
// that confines itself and then replaces itself with the test binary
// (syscall.Exec), as moby's reexec package does. Its value is a
// launchConfig in JSON.
const launchEnv = "LABKIT_GRADER_LAUNCH_e7c1"

// launchStatusFD is the launcher's descriptor of a pipe to the grader. The
// launcher marks it close-on-exec: the grader reads nothing from it when
// the exec succeeds, the reason when the launcher failed.
const launchStatusFD = 3

// launchConfig says what the launcher does.
type launchConfig struct {
	// Mode is "run" (confine, then exec os.Args[1:]), "sweep" (kill every
	// process of the user it runs as) or "probe" (exit at once: the
	// grader asks whether the process could be started at all).
	Mode string `json:"mode"`
	// Landlock, for Mode "run", confines the binary to reading and
	// executing Read, reading and writing Write, and writing the devices
	// in Devices.
	Landlock bool     `json:"landlock,omitempty"`
	Read     []string `json:"read,omitempty"`
	Write    []string `json:"write,omitempty"`
	Devices  []string `json:"devices,omitempty"`
	// FileSize, when above zero, is the RLIMIT_FSIZE of the binary: the
	// largest file it may write.
	FileSize int64 `json:"fsize,omitempty"`
	// UID and GID, when UID is above zero, are the user and group the
	// launcher (started as root) becomes before it does anything else. It
	// switches itself, rather than being started as the user, so that the
	// user need not be able to run the grader's own executable (go run
	// keeps it in a directory only its owner can enter).
	UID int `json:"uid,omitempty"`
	GID int `json:"gid,omitempty"`
	// Env is the binary's whole environment. The launcher's own is only
	// launchEnv: the package initializers of the grader's executable,
	// which run before the launcher's, must not see the binary's (one
	// would take a key meant for the test binary).
	Env []string `json:"env,omitempty"`
}

func init() {
	v, ok := os.LookupEnv(launchEnv)
	if !ok {
		return
	}
	// Every restriction below is per thread until the exec, which keeps
	// only the thread that calls it: all of it happens on this one.
	runtime.LockOSThread()
	var c launchConfig
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		launchFail(fmt.Errorf("launcher: bad configuration: %v", err))
	}
	if c.UID > 0 {
		if err := becomeUser(c.UID, c.GID); err != nil {
			launchFail(err)
		}
	}
	switch c.Mode {
	case "probe":
		os.Exit(0)
	case "sweep":
		if c.UID <= 0 {
			launchFail(errors.New("launcher: a sweep needs a user"))
		}
		sweepSelfUser()
		os.Exit(0)
	case "run":
		launchFail(launch(c, os.Args[1:]))
	default:
		launchFail(fmt.Errorf("launcher: unknown mode %q", c.Mode))
	}
}

// launch confines this process as c says and executes argv; it returns
// only on failure.
func launch(c launchConfig, argv []string) error {
	syscall.CloseOnExec(launchStatusFD)
	if len(argv) == 0 {
		return errors.New("launcher: no program to run")
	}
	env := c.Env
	if env == nil {
		env = []string{}
	}
	// No core files: a binary stopped with SIGQUIT (a hung case) must not
	// write one.
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}); err != nil {
		return fmt.Errorf("launcher: RLIMIT_CORE: %w", err)
	}
	if c.FileSize > 0 {
		lim := &syscall.Rlimit{Cur: uint64(c.FileSize), Max: uint64(c.FileSize)}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, lim); err != nil {
			return fmt.Errorf("launcher: RLIMIT_FSIZE: %w", err)
		}
	}
	if c.Landlock {
		if err := landlockRestrict(c.Read, c.Write, c.Devices); err != nil {
			return fmt.Errorf("launcher: landlock: %w", err)
		}
	}
	if err := syscall.Exec(argv[0], argv, env); err != nil {
		return fmt.Errorf("launcher: exec %s: %w", argv[0], err)
	}
	return nil
}

// becomeUser drops every group and becomes uid and gid, on every thread;
// then asks again to be killed when the grader dies, which the change of
// user cleared.
func becomeUser(uid, gid int) error {
	if err := syscall.Setgroups([]int{}); err != nil {
		return fmt.Errorf("launcher: setgroups: %w", err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("launcher: setgid %d: %w", gid, err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("launcher: setuid %d: %w", uid, err)
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); errno != 0 {
		return fmt.Errorf("launcher: pdeathsig: %w", errno)
	}
	if os.Getppid() == 1 && os.Getpid() != 1 {
		return errors.New("launcher: the grader is gone")
	}
	return nil
}

// launchFail reports err to the grader through the status pipe (and on
// stderr when there is none) and exits.
func launchFail(err error) {
	if err == nil {
		os.Exit(0)
	}
	f := os.NewFile(launchStatusFD, "status")
	if _, werr := f.WriteString(err.Error()); werr != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(125)
}

// sweepSelfUser kills every process of the user it runs as, but itself:
// kill(-1, SIGKILL) from an unprivileged process. The kernel signals them
// all under one lock, so a process that forks cannot slip through; the
// loop then waits (a little) for them to be gone.
func sweepSelfUser() {
	_ = syscall.Kill(-1, syscall.SIGKILL)
	for i := 0; i < 200; i++ {
		if err := syscall.Kill(-1, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		// A process killed but not yet reaped (a zombie whose parent is
		// gone until init reaps it) still counts; it can run no code.
		time.Sleep(5 * time.Millisecond)
		_ = syscall.Kill(-1, syscall.SIGKILL)
	}
}
