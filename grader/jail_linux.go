package grader

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// pidNamespaces reports whether the grader can start a process in a PID
// namespace of its own (CAP_SYS_ADMIN: root outside a container that
// drops it). It is asked once, by starting the launcher in one.
var pidNamespaces = sync.OnceValue(func() bool {
	exe, err := os.Executable()
	if err != nil {
		return false
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{launchEnv + `={"mode":"probe"}`}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL}
	return cmd.Run() == nil
})

// sweepLocks holds a mutex per user id: without a PID namespace, the runs
// of one user are one at a time, because the sweep after each kills every
// process of that user.
var sweepLocks sync.Map

// plainJail starts the test binary without bubblewrap, through the
// launcher: in a PID namespace of its own when the grader may make one (so
// that every process it starts, setsid or not, dies with it), as the user
// s.runAs when set, within RLIMIT_FSIZE, and confined by Landlock where the
// kernel has it to reading the system's programs and libraries and writing
// its own run directory.
func plainJail(s runSpec, lim Limits) (*jail, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: the launcher: %v", ErrJail, err)
	}
	runDir := filepath.Join(s.workDir, "run")
	cfg := launchConfig{Mode: "run", FileSize: lim.Disk, Env: s.env}
	if landlockABI() > 0 {
		cfg.Landlock = true
		cfg.Read = append(systemReadPaths(), filepath.Dir(s.binary))
		cfg.Write = []string{runDir}
		cfg.Devices = []string{"/dev/null", "/dev/zero", "/dev/full"}
	} else {
		s.notes.add("no Landlock on this kernel: without bubblewrap the test binary could read /proc (its own memory included) and every file its user may read, and write wherever its user may")
	}
	s.notes.add("without bubblewrap the test binary has this machine's network")
	cmd := exec.Command(exe, append([]string{s.binary}, s.args...)...)
	cmd.Args[0] = "labkit-launcher"
	cmd.Dir = runDir
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	cmd.SysProcAttr = attr

	j := &jail{cmd: cmd, after: func() {}, release: func() {}}
	j.disk = func() (int64, bool) { return dirUsage(runDir), true }
	cgroupJail(j, lim)

	var uid, gid int = -1, -1
	if s.runAs != "" {
		id, err := lookupRunAs(s.runAs)
		if err != nil {
			return nil, err
		}
		uid, gid = id.uid, id.gid
		if err := prepareRunAs(s.workDir, uid, gid); err != nil {
			return nil, fmt.Errorf("%w: give the run directory to %s: %v", ErrJail, s.runAs, err)
		}
		cfg.UID, cfg.GID = uid, gid
	}
	switch {
	case j.noCgroup == "":
		// The cgroup is killed whole after the run.
	case pidNamespaces():
		// The binary is the namespace's init: when it exits, the kernel
		// kills every process left in it before its wait returns.
		attr.Cloneflags = syscall.CLONE_NEWPID
	case uid >= 0:
		mu, _ := sweepLocks.LoadOrStore(uid, &sync.Mutex{})
		mu.(*sync.Mutex).Lock()
		var once sync.Once
		release := j.release
		j.release = func() { release(); once.Do(mu.(*sync.Mutex).Unlock) }
		j.after = func() {
			if err := sweepUser(exe, uid, gid); err != nil {
				s.notes.add("the sweep of " + s.runAs + "'s processes after the run failed: " + err.Error())
			}
		}
	default:
		s.notes.add("no PID namespace and no dedicated user (--run-as needs the grader to run as root): a process the submission detaches (setsid) can outlive its run")
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		j.release()
		return nil, err
	}
	cmd.Env = []string{launchEnv + "=" + string(data)}
	r, w, err := os.Pipe()
	if err != nil {
		j.release()
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{w} // launchStatusFD
	j.status, j.statusW = r, w
	return j, nil
}

// cgroupJail puts the jail's command in a cgroup v2 of its own when the
// machine has one to give (see cgroupParent), killed whole after the
// binary exits; otherwise it records why not in j.noCgroup.
func cgroupJail(j *jail, lim Limits) {
	parent, why := cgroupParent()
	if parent == "" {
		j.noCgroup = why
		return
	}
	cg, err := newRunCgroup(parent, lim)
	if err != nil {
		j.noCgroup = "cannot make the run's cgroup: " + err.Error()
		return
	}
	cg.attach(j.cmd.SysProcAttr)
	after, release := j.after, j.release
	j.after = func() { cg.kill(); after() }
	j.release = func() { release(); cg.remove() }
	j.limitHit = func() string { return cg.limitHit(lim) }
	j.cpu = cg.cpu
}

// systemReadPaths are what a test binary may read and execute outside its
// run directory: what the bubblewrap sandbox shows it.
func systemReadPaths() []string {
	return []string{"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/ld.so.cache", "/dev"}
}

// sweepUser kills every process of uid, from a launcher running as uid.
func sweepUser(exe string, uid, gid int) error {
	data, err := json.Marshal(launchConfig{Mode: "sweep", UID: uid, GID: gid})
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Args[0] = "labkit-sweep"
	cmd.Env = []string{launchEnv + "=" + string(data)}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// prepareRunAs lets uid reach the run's binary and own its run directory:
// the scratch directory and the run's directory become traversable (not
// listable), and the scratch directory's other entries (the class's
// submissions, other runs' binaries) closed to anyone but the grader.
func prepareRunAs(workDir string, uid, gid int) error {
	scratch := filepath.Dir(workDir)
	for d := filepath.Dir(scratch); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%s cannot be entered by other users, so the run's user cannot reach the test binary under it (set TMPDIR to a directory other users can enter, such as /tmp)", d)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if err := os.Chmod(scratch, 0o711); err != nil {
		return err
	}
	entries, err := os.ReadDir(scratch)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(scratch, e.Name())
		if p == workDir || !e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().Perm()&0o066 != 0 {
			_ = os.Chmod(p, 0o700)
		}
	}
	if err := os.Chmod(workDir, 0o711); err != nil {
		return err
	}
	return filepath.Walk(filepath.Join(workDir, "run"), func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

type runAsID struct{ uid, gid int }

var runAsCache sync.Map // name -> runAsID

// lookupRunAs finds the user a test binary runs as.
func lookupRunAs(name string) (runAsID, error) {
	if v, ok := runAsCache.Load(name); ok {
		return v.(runAsID), nil
	}
	uid, gid, err := LookupUser(name)
	if err != nil {
		return runAsID{}, err
	}
	id := runAsID{uid, gid}
	runAsCache.Store(name, id)
	return id, nil
}

// openSandboxDisk opens the root of the file system at /work in the mount
// namespace of process pid (the sandbox's sized tmpfs), nil when it cannot.
func openSandboxDisk(pid int) *os.File {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/root/work", oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "sandbox-disk")
}

// openWaitingSandboxDisk opens the disk (the tmpfs at /work, of size disk)
// of the sandbox that bubblewrap process pid has set up and in which it
// waits to start the binary; nil while there is none yet.
func openWaitingSandboxDisk(pid int, disk int64) *os.File {
	queue := children(pid)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		queue = append(queue, children(p)...)
		f := openSandboxDisk(p)
		if f == nil {
			continue
		}
		// Only the sandbox's own tmpfs has the size it was given (a page
		// more at most): not this machine's /work, nor a sandbox not yet
		// set up.
		var st syscall.Statfs_t
		if err := syscall.Fstatfs(int(f.Fd()), &st); err == nil {
			if size := int64(st.Blocks) * st.Bsize; size >= disk && size < disk+1<<16 {
				return f
			}
		}
		f.Close()
	}
	return nil
}

// fsUsed is how many bytes are used of the file system f is on.
func fsUsed(f *os.File) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &st); err != nil {
		return 0, false
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize, true
}

// autogroupEnabled reports whether the scheduler groups the threads of a
// session to share the CPU (CONFIG_SCHED_AUTOGROUP).
func autogroupEnabled() bool {
	data, err := os.ReadFile("/proc/sys/kernel/sched_autogroup_enabled")
	return err == nil && strings.TrimSpace(string(data)) == "1"
}
