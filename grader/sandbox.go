package grader

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sandbox says where a submission's test binary runs.
type Sandbox string

// The sandboxes. SandboxOff runs the binary as a plain child process in its
// scratch directory; SandboxBwrap runs it under bubblewrap (Linux only).
const (
	SandboxOff   Sandbox = "off"
	SandboxBwrap Sandbox = "bwrap"
)

// ErrNoSandbox is returned by ResolveSandbox when bwrap is asked for and does
// not work here.
var ErrNoSandbox = errors.New("the bubblewrap sandbox is not available")

// ErrJail is wrapped by the errors of a run whose test binary could not be
// confined as the grader means to (the launcher failed, the run's user
// cannot reach its directory): the grader's fault, not the submission's.
var ErrJail = errors.New("cannot confine the test binary")

// ResolveSandbox turns the --sandbox flag (auto, bwrap, off) into a Sandbox.
// For auto it returns SandboxOff and a one-line note when bwrap does not
// work; for bwrap that case is an error wrapping ErrNoSandbox.
func ResolveSandbox(mode string) (Sandbox, string, error) {
	switch mode {
	case "off":
		return SandboxOff, "", nil
	case "auto", "", "bwrap":
		ok, why := BwrapSupport()
		if ok {
			return SandboxBwrap, "", nil
		}
		if mode == "bwrap" {
			return "", "", fmt.Errorf("%w: %s", ErrNoSandbox, why)
		}
		return SandboxOff, "warning: no sandbox (" + why + "): each submission runs in its own scratch copy of the kit, but its code can reach your files and the network; install bubblewrap (apt-get install bubblewrap) for the sandbox", nil
	default:
		return "", "", fmt.Errorf("--sandbox=%q: want auto, bwrap or off", mode)
	}
}

// BwrapSupport reports whether bwrap can start a sandbox here, and why not.
var BwrapSupport = sync.OnceValues(func() (bool, string) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return false, "bwrap is not installed"
	}
	args := append(bwrapBase(false, 1<<20), bwrapSeal()...)
	args = append(args, "--", "/usr/bin/true")
	if out, err := exec.Command(path, args...).CombinedOutput(); err != nil {
		return false, "bwrap cannot create a sandbox here: " + strings.TrimSpace(string(out))
	}
	return true, ""
})

// Limits caps what one test binary may use. A zero field takes its default.
type Limits struct {
	Memory  int64         // resident memory of the whole process tree, bytes (default 2 GiB)
	CPU     time.Duration // CPU time of the whole process tree (default 3 minutes)
	Threads int           // threads across the process tree (default 2000)
	Output  int64         // bytes of test output (default 32 MiB)
	// Disk is what the run may write, its directory and /tmp together,
	// in bytes (default 256 MiB): the size of the sandbox's tmpfs, and
	// without bubblewrap the largest file (RLIMIT_FSIZE) and the most the
	// run's directory may hold.
	Disk int64
}

func (l Limits) withDefaults() Limits {
	if l.Memory == 0 {
		l.Memory = 2 << 30
	}
	if l.CPU == 0 {
		l.CPU = 3 * time.Minute
	}
	if l.Threads == 0 {
		l.Threads = 2000
	}
	if l.Output == 0 {
		l.Output = 32 << 20
	}
	if l.Disk == 0 {
		l.Disk = DefaultDisk
	}
	return l
}

// DefaultDisk is Limits.Disk's default.
const DefaultDisk = 256 << 20

// bwrapBase is the sandbox's fixed part: every namespace unshared (no
// network unless shareNet), the system's /usr read-only, /dev's few
// devices, no /proc, nothing of the instructor's files, and the process
// tree killed when the grader dies. /work is a tmpfs of disk bytes holding
// run/ (the binary's working directory, $HOME under it) and run/tmp, which
// /tmp links to: all it may write. bwrapSeal, last, makes the rest
// read-only.
func bwrapBase(shareNet bool, disk int64) []string {
	args := []string{"--unshare-all", "--die-with-parent", "--new-session",
		"--ro-bind", "/usr", "/usr", "--dev", "/dev",
		"--size", strconv.FormatInt(disk, 10), "--tmpfs", "/work",
		"--dir", "/work/run/tmp", "--symlink", "/work/run/tmp", "/tmp"}
	if shareNet {
		args = append(args, "--share-net")
	}
	for _, d := range []string{"/lib", "/lib64", "/lib32", "/bin", "/sbin"} {
		if target, err := os.Readlink(d); err == nil {
			args = append(args, "--symlink", target, d)
		} else if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			args = append(args, "--ro-bind", d, d)
		}
	}
	args = append(args, "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache")
	if os.Geteuid() == 0 {
		// Root in the sandbox could undo much of it; nobody cannot.
		args = append(args, "--unshare-user", "--uid", "65534", "--gid", "65534")
	}
	return args
}

// bwrapSeal remounts the sandbox's root and /dev read-only: without it
// both are tmpfs the binary could fill beyond its disk limit.
func bwrapSeal() []string { return []string{"--remount-ro", "/dev", "--remount-ro", "/"} }

// runSpec is one test binary to run and convert to test2json.
type runSpec struct {
	binary   string // the test binary, in a directory of workDir other than run/
	workDir  string // the run's private directory; its run/ is where the binary runs and writes
	dir      string // where the binary runs with noLimits; empty means workDir/run
	args     []string
	env      []string // the binary's whole environment (paths as seen inside the sandbox)
	sandbox  Sandbox
	shareNet bool
	limits   Limits
	noLimits bool          // do not watch memory, CPU, threads and output (labctl check)
	wall     time.Duration // kill after this long
	pkg      string        // import path, for test2json
	// runAs, without bubblewrap, is the user the binary runs as (the
	// grader must be root); empty means the grader's own.
	runAs string
	// notes collects what the run could not enforce on this machine,
	// each said once; nil drops them.
	notes *noteSet
	// onStart, when set, is called once the binary has started, with a
	// function that makes it dump its goroutines and exit (SIGQUIT, sent
	// to the test binary itself, inside the sandbox too); a binary that
	// does not exit within quitGrace of it is killed.
	onStart func(quit func())
}

// noteSet is a list of notes, each kept once. Its methods do nothing on
// a nil set.
type noteSet struct {
	mu   sync.Mutex
	list []string
}

func (n *noteSet) add(note string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, have := range n.list {
		if have == note {
			return
		}
	}
	n.list = append(n.list, note)
}

// all returns the notes in the order they were first added.
func (n *noteSet) all() []string {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.list...)
}

// quitGrace is how long a test binary sent SIGQUIT has to print its
// goroutines and exit before it is killed.
const quitGrace = 10 * time.Second

// survivorGrace is how long after the test binary exits the grader waits
// for its output pipe to close: longer means a process it started outside
// its process group, and out of the grader's reach, still holds it.
const survivorGrace = 3 * time.Second

// runResult says how the run ended, beyond its output.
type runResult struct {
	limit  string // the limit that was hit and stopped the run, "" when none
	exited bool   // the binary exited with status 0
}

// jail is one run's test binary as it is started, and how it is
// contained.
type jail struct {
	cmd *exec.Cmd
	// status and statusW are the launcher's status pipe (see
	// launchStatusFD), nil when there is no launcher.
	status, statusW *os.File
	// disk, when set, returns the bytes the run has written; false when
	// that cannot be read now. It is read while the binary runs and once
	// after it exits.
	disk func() (int64, bool)
	// attach, when set, is called every few milliseconds from the
	// binary's start until it returns true or the binary exits.
	attach func() bool
	// started, when set, is called once the binary's process has started,
	// before attach: bubblewrap's sandbox waits for it (--block-fd), so
	// that its disk is measured however soon the binary exits.
	started func()
	// after is called once the binary has exited, before the results
	// are: it stops what the binary left running.
	after func()
	// release is called when the run is over.
	release func()
	// limitHit, when set, names a limit the kernel enforced on the run
	// (a cgroup's), "" when none.
	limitHit func() string
	// cpu, when set, is the CPU time of every process of the run (a
	// cgroup's count, which a detached process does not leave).
	cpu func() time.Duration
	// noCgroup says why the run has no cgroup v2 of its own; empty when
	// it has one, which holds its memory, processes and CPU share.
	noCgroup string
}

// directJail runs the binary as it is, in a process group of its own:
// labctl check, which grades the student's code on their own machine.
func directJail(s runSpec) *jail {
	cmd := exec.Command(s.binary, s.args...)
	cmd.Dir = filepath.Join(s.workDir, "run")
	if s.dir != "" {
		cmd.Dir = s.dir
	}
	cmd.Env = s.env
	cmd.SysProcAttr = groupAttrs()
	return &jail{cmd: cmd, after: func() {}, release: func() {}}
}

// bwrapJail runs the binary under bubblewrap (see bwrapBase). The binary's
// directory is mounted read-only in /work; what the grader put in
// workDir/run (the attestation key, empty home/ and tmp/) is copied into
// the sandbox's own run/, on its tmpfs.
func bwrapJail(s runSpec, lim Limits) (*jail, error) {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoSandbox, err)
	}
	binDir, err := filepath.Rel(s.workDir, filepath.Dir(s.binary))
	if err != nil || binDir == "." || binDir == "run" || strings.HasPrefix(binDir, "..") {
		return nil, fmt.Errorf("%w: the test binary %s is not in a directory of its own under %s", ErrNoSandbox, s.binary, s.workDir)
	}
	inside := "/work/" + filepath.ToSlash(binDir)
	argv := append([]string{bw}, bwrapBase(s.shareNet, lim.Disk)...)
	argv = append(argv, "--ro-bind", filepath.Dir(s.binary), inside)
	var files []*os.File
	closeFiles := func() {
		for _, f := range files {
			f.Close()
		}
	}
	runDir := filepath.Join(s.workDir, "run")
	err = filepath.Walk(runDir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(runDir, p)
		dest := "/work/run/" + filepath.ToSlash(rel)
		switch {
		case fi.IsDir():
			argv = append(argv, "--dir", dest)
		case fi.Mode().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			files = append(files, f)
			argv = append(argv, "--perms", "0600", "--file", strconv.Itoa(2+len(files)), dest)
		}
		return nil
	})
	if err != nil {
		closeFiles()
		return nil, fmt.Errorf("%w: copy the run directory: %v", ErrKit, err)
	}
	// The sandbox waits, set up but before the binary runs, until the
	// grader has opened its disk (see started below).
	blockR, blockW, err := os.Pipe()
	if err != nil {
		closeFiles()
		return nil, fmt.Errorf("%w: %v", ErrNoSandbox, err)
	}
	files = append(files, blockR)
	argv = append(argv, "--block-fd", strconv.Itoa(2+len(files)))
	argv = append(argv, bwrapSeal()...)
	argv = append(argv, "--chdir", "/work/run", "--clearenv")
	for _, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		argv = append(argv, "--setenv", k, v)
	}
	argv = append(argv, "--", inside+"/"+filepath.Base(s.binary))
	argv = append(argv, s.args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = runDir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.ExtraFiles = files
	cmd.SysProcAttr = groupAttrs()
	// The sandbox's tmpfs is measured through a descriptor of its root,
	// opened before the test binary runs (started) or, failing that, as
	// soon as it runs (attach): it keeps the file system readable after
	// the sandbox is gone, for the last measure.
	var (
		mu   sync.Mutex
		root *os.File
	)
	j := &jail{cmd: cmd, after: func() {}, release: func() {}}
	cgroupJail(j, lim)
	release := j.release
	var unblock sync.Once
	j.release = func() {
		unblock.Do(func() { blockW.Close() })
		release()
		closeFiles()
		mu.Lock()
		defer mu.Unlock()
		if root != nil {
			root.Close()
		}
	}
	j.started = func() {
		// The sandbox is set up and waits on blockR: open its disk
		// through the waiting bwrap process, whose root is the sandbox's
		// now, so that a binary that fills it and exits at once is still
		// measured. Past a deadline (a machine too busy), let it run and
		// attach as the binary runs.
		blockR.Close()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if f := openWaitingSandboxDisk(cmd.Process.Pid, lim.Disk); f != nil {
				mu.Lock()
				root = f
				mu.Unlock()
				break
			}
			if time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		unblock.Do(func() {
			blockW.Write([]byte{1})
			blockW.Close()
		})
	}
	j.attach = func() bool {
		mu.Lock()
		defer mu.Unlock()
		if root == nil && cmd.Process != nil {
			// Only once the test binary runs is the sandbox's root its
			// own: before, /proc/PID/root/work may be this machine's.
			if child := sandboxedChild(cmd.Process.Pid); child > 0 {
				root = openSandboxDisk(child)
			}
		}
		return root != nil
	}
	j.disk = func() (int64, bool) {
		if !j.attach() {
			return 0, false
		}
		mu.Lock()
		defer mu.Unlock()
		return fsUsed(root)
	}
	return j, nil
}

// diskSlack is how close to its disk limit a run counts as having hit it.
func diskSlack(disk int64) int64 { return min(1<<20, disk/64) }

// dirUsage is the size of the files under dir.
func dirUsage(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// LookupUser returns the user and group ids of the user name, or of
// "UID[:GID]". "nobody" is 65534 where the system does not name it.
func LookupUser(name string) (uid, gid int, err error) {
	if u, g, ok := strings.Cut(name, ":"); ok || isDigits(name) {
		uid, err1 := strconv.Atoi(u)
		gid, err2 := uid, error(nil)
		if ok {
			gid, err2 = strconv.Atoi(g)
		}
		if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
			return 0, 0, fmt.Errorf("user %q: want a name or UID[:GID]", name)
		}
		if uid == 0 {
			return 0, 0, fmt.Errorf("user %q is root: the test binary must run unprivileged", name)
		}
		return uid, gid, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		if name == "nobody" {
			return 65534, 65534, nil
		}
		return 0, 0, fmt.Errorf("user %q: %w", name, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	if uid == 0 {
		return 0, 0, fmt.Errorf("user %q is root: the test binary must run unprivileged", name)
	}
	return uid, gid, nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// ErrRunAs is wrapped by ResolveRunAs's errors.
var ErrRunAs = errors.New("cannot run test binaries as that user")

// ResolveRunAs turns --run-as into Options.RunAs: the user test binaries
// run as without bubblewrap. Empty (the default) means nobody when the
// grader runs as root without the sandbox, and the grader's own user
// otherwise. A user needs the grader to run as root.
func ResolveRunAs(name string, sandbox Sandbox) (string, error) {
	root := os.Geteuid() == 0
	if name == "" {
		if root && sandbox == SandboxOff {
			return "nobody", nil
		}
		return "", nil
	}
	if !root {
		return "", fmt.Errorf("%w: %s: the grader must run as root to switch users", ErrRunAs, name)
	}
	if _, _, err := LookupUser(name); err != nil {
		return "", fmt.Errorf("%w: %v", ErrRunAs, err)
	}
	return name, nil
}

// runSandboxed runs the spec's binary, feeds its output through test2json
// and that stream to consume. The binary's whole process tree is stopped
// when ctx ends, the wall time passes, or a limit is hit.
func runSandboxed(ctx context.Context, s runSpec, consume func(io.Reader)) (runResult, error) {
	t2j, err := test2jsonPath()
	if err != nil {
		return runResult{}, err
	}
	lim := s.limits.withDefaults()
	var j *jail
	switch {
	case s.noLimits:
		j = directJail(s)
	case s.sandbox == SandboxBwrap:
		j, err = bwrapJail(s, lim)
	default:
		j, err = plainJail(s, lim)
	}
	if err != nil {
		return runResult{}, err
	}
	defer j.release()
	if !s.noLimits {
		noteLimits(s, lim, j.noCgroup)
	}
	bin := j.cmd

	// The binary writes into a pipe that test2json reads through a cap on
	// the output; the binary's own exit status decides the package result.
	pr, pw, err := os.Pipe()
	if err != nil {
		return runResult{}, err
	}
	defer pr.Close()
	bin.Stdout, bin.Stderr = pw, pw

	var (
		mu    sync.Mutex
		limit string
	)
	stop := func(why string) {
		mu.Lock()
		if limit == "" {
			limit = why
		}
		mu.Unlock()
		killGroup(bin.Process.Pid)
	}
	conv := exec.Command(t2j, "-t", "-p", s.pkg)
	conv.Stdin = pr
	if !s.noLimits {
		conv.Stdin = &capReader{r: pr, left: lim.Output, over: func() { stop(fmt.Sprintf("output (%d MiB)", lim.Output>>20)) }}
	}
	convOut, err := conv.StdoutPipe()
	if err != nil {
		pw.Close()
		return runResult{}, err
	}
	if err := conv.Start(); err != nil {
		pw.Close()
		return runResult{}, fmt.Errorf("%w: test2json: %v", ErrNoGo, err)
	}
	startErr := bin.Start()
	if startErr == nil && j.started != nil {
		j.started()
	}
	if j.statusW != nil {
		j.statusW.Close()
	}
	if startErr == nil && j.status != nil {
		// The launcher closes its end when it executes the binary, and
		// writes why when it cannot.
		msg, _ := io.ReadAll(j.status)
		j.status.Close()
		if len(msg) > 0 {
			killGroup(bin.Process.Pid)
			bin.Wait()
			startErr = fmt.Errorf("%w: %s", ErrJail, msg)
		}
	}
	if startErr != nil {
		pw.Close()
		conv.Process.Kill()
		conv.Wait()
		return runResult{}, fmt.Errorf("start the test binary: %w", startErr)
	}
	pw.Close()

	binDone := make(chan error, 1)
	exited := make(chan struct{})
	consumed := make(chan struct{})
	if j.attach != nil {
		go func() {
			for !j.attach() {
				select {
				case <-exited:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
	}
	diskFull := func() bool {
		used, ok := j.disk()
		return ok && used >= lim.Disk-diskSlack(lim.Disk)
	}
	go func() {
		err := bin.Wait()
		close(exited)
		// Whatever the binary left behind in its process group goes too,
		// and what it started outside the group where the jail can reach
		// it, which also closes the pipe for test2json.
		killGroup(bin.Process.Pid)
		j.after()
		if !s.noLimits {
			// A limit the kernel enforced (an OOM kill), or a disk
			// filled by a binary that exited before a measure saw it.
			hit := ""
			if j.limitHit != nil {
				hit = j.limitHit()
			}
			if hit == "" && j.disk != nil && diskFull() {
				hit = fmt.Sprintf("disk (%d MiB)", lim.Disk>>20)
			}
			mu.Lock()
			if limit == "" {
				limit = hit
			}
			mu.Unlock()
		}
		binDone <- err
		select {
		case <-consumed:
		case <-time.After(survivorGrace):
			// A process out of reach holds the output pipe: cut it off.
			s.notes.add("a process the test binary started outlived it and could not be stopped (see the sandbox notes)")
			pr.Close()
		}
	}()
	if s.onStart != nil {
		// Under bwrap the test binary starts a little after bwrap: its
		// stop (and the watch of a binary that starts no case) waits for
		// it to run. bwrap does not pass signals on: the binary is the
		// first process under it that is not bwrap.
		target := func() int { return bin.Process.Pid }
		if s.sandbox == SandboxBwrap && !s.noLimits {
			target = func() int { return sandboxedChild(bin.Process.Pid) }
		}
		var once sync.Once
		quitBinary := func() {
			once.Do(func() {
				select {
				case <-exited:
					return // its pid may be another process's by now
				default:
				}
				if pid := target(); pid <= 0 || quit(pid) != nil {
					killGroup(bin.Process.Pid)
					return
				}
				time.AfterFunc(quitGrace, func() {
					select {
					case <-exited:
					default:
						killGroup(bin.Process.Pid)
					}
				})
			})
		}
		go func() {
			for target() <= 0 {
				select {
				case <-exited:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
			s.onStart(quitBinary)
		}()
	}
	watchDone := make(chan struct{})
	go func() {
		wall := time.NewTimer(s.wall)
		defer wall.Stop()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-watchDone:
				return
			case <-ctx.Done():
				stop("")
				return
			case <-wall.C:
				stop(fmt.Sprintf("wall time (%s)", s.wall))
				return
			case <-tick.C:
				if s.noLimits {
					continue
				}
				if j.limitHit != nil {
					if hit := j.limitHit(); hit != "" {
						stop(hit)
					}
				}
				u := treeUsage(bin.Process.Pid)
				if j.cpu != nil {
					u.cpu = j.cpu()
				}
				switch {
				case u.rss > lim.Memory:
					stop(fmt.Sprintf("memory (%d MiB)", lim.Memory>>20))
				case u.cpu > lim.CPU:
					stop(fmt.Sprintf("CPU time (%s)", lim.CPU))
				case u.threads > lim.Threads:
					stop(fmt.Sprintf("threads and processes (%d)", lim.Threads))
				}
				// Every 50 ms under bwrap (a statfs); every 250 ms
				// without (a walk of the run's directory).
				if j.disk != nil && (s.sandbox == SandboxBwrap || n%5 == 0) && diskFull() {
					stop(fmt.Sprintf("disk (%d MiB)", lim.Disk>>20))
				}
			}
		}
	}()
	consume(convOut)
	io.Copy(io.Discard, convOut)
	close(consumed)
	_ = conv.Wait()
	binErr := <-binDone
	close(watchDone)
	mu.Lock()
	defer mu.Unlock()
	if ctx.Err() != nil {
		return runResult{}, ctx.Err()
	}
	return runResult{limit: limit, exited: binErr == nil}, nil
}

// noteLimits records, once per run, the limits this machine cannot hold
// as Limits asks: without a cgroup (noCgroup says why not) memory is
// polled and the CPU shared by the scheduler alone.
func noteLimits(s runSpec, lim Limits, noCgroup string) {
	if s.sandbox != SandboxBwrap {
		s.notes.add(fmt.Sprintf("disk (%d MiB): without bubblewrap no file may be larger (RLIMIT_FSIZE) and the run's directory is measured every 250 ms; there is no quota", lim.Disk>>20))
	}
	if noCgroup == "" {
		return
	}
	s.notes.add(fmt.Sprintf("no cgroup v2 for the run (%s): memory (%d MiB) is the resident memory of its processes, polled every 50 ms", noCgroup, lim.Memory>>20))
	if autogroupEnabled() {
		s.notes.add("CPU: each test binary is a session of its own, which the kernel's autogroup scheduler gives an equal share")
	} else {
		s.notes.add("CPU: no cgroup and no autogroup here: a submission that spins every core slows the ones graded beside it (each case's time budget still holds)")
	}
}

// capReader passes at most left bytes through, then calls over once and
// reports end of input.
type capReader struct {
	r    io.Reader
	left int64
	over func()
	once sync.Once
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.once.Do(c.over)
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

type usage struct {
	rss     int64
	cpu     time.Duration
	threads int
}

// treeUsage sums the resident memory, CPU time and threads of pid's
// process tree, read from /proc.
func treeUsage(pid int) usage {
	var u usage
	var walk func(p int)
	walk = func(p int) {
		{
			if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p)); err == nil {
				// Fields after the command name, which is in parentheses.
				if i := bytes.LastIndexByte(st, ')'); i > 0 {
					f := strings.Fields(string(st[i+1:]))
					if len(f) > 21 {
						ut, _ := strconv.ParseInt(f[11], 10, 64)
						stt, _ := strconv.ParseInt(f[12], 10, 64)
						u.cpu += time.Duration(ut+stt) * (time.Second / 100) // USER_HZ is 100 on Linux
						nth, _ := strconv.Atoi(f[17])
						u.threads += nth
						rss, _ := strconv.ParseInt(f[21], 10, 64)
						u.rss += rss * int64(os.Getpagesize())
					}
				}
			}
		}
		for _, c := range children(p) {
			walk(c)
		}
	}
	walk(pid)
	return u
}

// sandboxedChild returns the pid of the first process under pid (bwrap)
// that is not bwrap itself: the test binary. It returns 0 when there is
// none.
func sandboxedChild(pid int) int {
	queue := children(pid)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p))
		if err != nil {
			continue
		}
		if strings.TrimSpace(string(comm)) != "bwrap" {
			return p
		}
		queue = append(queue, children(p)...)
	}
	return 0
}

// children lists the pids of pid's child processes, from /proc.
func children(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, k := range strings.Fields(string(kids)) {
			if c, err := strconv.Atoi(k); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// test2jsonPath builds cmd/test2json once into the user cache (it is not
// shipped prebuilt with every toolchain) and returns its path.
var test2jsonPath = sync.OnceValues(func() (string, error) {
	ver, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoGo, err)
	}
	dir, err := cacheDir("tools", strings.TrimSpace(string(ver)))
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "test2json")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp := fmt.Sprintf("%s.%d", path, os.Getpid())
	if out, err := exec.Command("go", "build", "-o", tmp, "cmd/test2json").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: build test2json: %v: %s", ErrNoGo, err, bufio.NewScanner(bytes.NewReader(out)).Text())
	}
	return path, os.Rename(tmp, path)
})
