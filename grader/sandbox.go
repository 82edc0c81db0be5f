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
	args := append(bwrapBase(false), "--", "/usr/bin/true")
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
	return l
}

// bwrapBase is the sandbox's fixed part: every namespace unshared (no
// network unless shareNet), the system's /usr read-only, a private /tmp
// and /dev, no /proc (so graded code cannot read its own memory, where the
// signing key is), nothing of the instructor's files, and the process tree
// killed when the grader dies.
func bwrapBase(shareNet bool) []string {
	args := []string{"--unshare-all", "--die-with-parent", "--new-session",
		"--ro-bind", "/usr", "/usr", "--dev", "/dev", "--tmpfs", "/tmp"}
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

// runSpec is one test binary to run and convert to test2json.
type runSpec struct {
	binary   string // the test binary, inside workDir when sandboxed
	workDir  string // the run's private, writable directory (the sandbox's /work)
	dir      string // where the binary runs when not sandboxed; empty means workDir/run
	args     []string
	env      []string // the binary's whole environment (paths as seen inside the sandbox)
	sandbox  Sandbox
	shareNet bool
	limits   Limits
	noLimits bool          // do not watch memory, CPU, threads and output (labctl check)
	wall     time.Duration // kill after this long
	pkg      string        // import path, for test2json
	// onStart, when set, is called once the binary has started, with a
	// function that makes it dump its goroutines and exit (SIGQUIT, sent
	// to the test binary itself, inside the sandbox too); a binary that
	// does not exit within quitGrace of it is killed.
	onStart func(quit func())
}

// quitGrace is how long a test binary sent SIGQUIT has to print its
// goroutines and exit before it is killed.
const quitGrace = 10 * time.Second

// runResult says how the run ended, beyond its output.
type runResult struct {
	limit  string // the limit that was hit and stopped the run, "" when none
	exited bool   // the binary exited with status 0
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
	binary := s.binary
	var argv []string
	if s.sandbox == SandboxBwrap {
		rel, _ := filepath.Rel(s.workDir, s.binary)
		inside := "/work/" + filepath.ToSlash(rel)
		bw, err := exec.LookPath("bwrap")
		if err != nil {
			return runResult{}, fmt.Errorf("%w: %v", ErrNoSandbox, err)
		}
		argv = append([]string{bw}, bwrapBase(s.shareNet)...)
		argv = append(argv, "--bind", s.workDir, "/work", "--chdir", "/work/run", "--clearenv")
		for _, kv := range s.env {
			k, v, _ := strings.Cut(kv, "=")
			argv = append(argv, "--setenv", k, v)
		}
		argv = append(argv, "--", inside)
	} else {
		argv = []string{binary}
	}
	argv = append(argv, s.args...)

	// The binary writes into a pipe that test2json reads through a cap on
	// the output; the binary's own exit status decides the package result.
	pr, pw, err := os.Pipe()
	if err != nil {
		return runResult{}, err
	}
	defer pr.Close()
	bin := exec.Command(argv[0], argv[1:]...)
	bin.Stdout, bin.Stderr = pw, pw
	bin.Dir = filepath.Join(s.workDir, "run")
	if s.sandbox != SandboxBwrap && s.dir != "" {
		bin.Dir = s.dir
	}
	bin.Env = s.env
	if s.sandbox == SandboxBwrap {
		bin.Env = []string{"PATH=/usr/bin:/bin"}
	}
	bin.SysProcAttr = groupAttrs()

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
	if err := bin.Start(); err != nil {
		pw.Close()
		conv.Process.Kill()
		conv.Wait()
		return runResult{}, fmt.Errorf("start the test binary: %w", err)
	}
	pw.Close()

	binDone := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		err := bin.Wait()
		close(exited)
		// Whatever the binary left behind in its process group goes too,
		// which also closes the pipe for test2json.
		killGroup(bin.Process.Pid)
		binDone <- err
	}()
	if s.onStart != nil {
		var once sync.Once
		s.onStart(func() {
			once.Do(func() {
				select {
				case <-exited:
					return // its pid may be another process's by now
				default:
				}
				pid := bin.Process.Pid
				if s.sandbox == SandboxBwrap {
					// bwrap does not pass signals on: signal the test
					// binary, the first process under it that is not bwrap.
					pid = sandboxedChild(pid)
				}
				if pid <= 0 || quit(pid) != nil {
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
		})
	}
	watchDone := make(chan struct{})
	go func() {
		wall := time.NewTimer(s.wall)
		defer wall.Stop()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
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
				u := treeUsage(bin.Process.Pid)
				switch {
				case u.rss > lim.Memory:
					stop(fmt.Sprintf("memory (%d MiB)", lim.Memory>>20))
				case u.cpu > lim.CPU:
					stop(fmt.Sprintf("CPU time (%s)", lim.CPU))
				case u.threads > lim.Threads:
					stop(fmt.Sprintf("threads and processes (%d)", lim.Threads))
				}
			}
		}
	}()
	consume(convOut)
	io.Copy(io.Discard, convOut)
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
