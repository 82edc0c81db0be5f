package grader

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"unsafe"
)

// The Landlock system calls and constants (linux/landlock.h), which the
// syscall package does not define. The numbers are the same on every
// architecture.
const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	landlockCreateRulesetVersion = 1 << 0
	landlockRulePathBeneath      = 1

	llExecute    = 1 << 0
	llWriteFile  = 1 << 1
	llReadFile   = 1 << 2
	llReadDir    = 1 << 3
	llRemoveDir  = 1 << 4
	llRemoveFile = 1 << 5
	llMakeChar   = 1 << 6
	llMakeDir    = 1 << 7
	llMakeReg    = 1 << 8
	llMakeSock   = 1 << 9
	llMakeFifo   = 1 << 10
	llMakeBlock  = 1 << 11
	llMakeSym    = 1 << 12
	llRefer      = 1 << 13 // ABI 2
	llTruncate   = 1 << 14 // ABI 3
	llIoctlDev   = 1 << 15 // ABI 5

	// Scopes (ABI 6): no connecting to an abstract unix socket, and no
	// signal, to a process outside the domain.
	llScopeAbstractUnix = 1 << 0
	llScopeSignal       = 1 << 1

	prSetNoNewPrivs = 38
	oPath           = 0x200000
)

// llFileRights are the rights that apply to a file (the others apply to a
// directory's entries).
const llFileRights = llExecute | llWriteFile | llReadFile | llTruncate | llIoctlDev

// landlockABI is the Landlock ABI version of the running kernel, 0 when
// Landlock is absent or disabled.
var landlockABI = sync.OnceValue(func() int {
	v, _, errno := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, landlockCreateRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
})

// landlockHandled is every filesystem right the given ABI knows: what the
// ruleset denies unless a rule allows it.
func landlockHandled(abi int) uint64 {
	h := uint64(llExecute | llWriteFile | llReadFile | llReadDir | llRemoveDir | llRemoveFile | llMakeChar |
		llMakeDir | llMakeReg | llMakeSock | llMakeFifo | llMakeBlock | llMakeSym)
	if abi >= 2 {
		h |= llRefer
	}
	if abi >= 3 {
		h |= llTruncate
	}
	if abi >= 5 {
		h |= llIoctlDev
	}
	return h
}

type landlockRulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// landlockPathBeneath is struct landlock_path_beneath_attr, packed: the
// kernel reads its first 12 bytes.
type landlockPathBeneath struct {
	allowed  uint64
	parentFD int32
	_        int32
}

// errNoLandlock is returned by landlockRestrict on a kernel without it.
var errNoLandlock = errors.New("Landlock is not available on this kernel")

// landlockRestrict confines the calling thread, and what it executes, to
// reading and executing under read, reading and writing (no executing)
// under write, and writing the device files devices. Nothing else of the
// file system can be opened: not /proc, not /sys, not the grader's files.
// With ABI 6 and later it also cannot signal, or connect to an abstract
// unix socket of, a process outside itself and its children.
func landlockRestrict(read, write, devices []string) error {
	abi := landlockABI()
	if abi == 0 {
		return errNoLandlock
	}
	handled := landlockHandled(abi)
	attr := landlockRulesetAttr{handledFS: handled}
	size := unsafe.Sizeof(uint64(0))
	if abi >= 6 {
		attr.scoped = llScopeAbstractUnix | llScopeSignal
		size = unsafe.Sizeof(attr)
	}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("create ruleset: %w", errno)
	}
	defer syscall.Close(int(fd))

	const readRights = llExecute | llReadFile | llReadDir
	const writeRights = llReadFile | llReadDir | llWriteFile | llRemoveDir | llRemoveFile | llMakeDir |
		llMakeReg | llMakeSym | llMakeFifo | llMakeSock | llRefer | llTruncate
	add := func(path string, rights uint64) error {
		pfd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.ENOENT) {
			return nil // not on this system: nothing to allow
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", path, err)
		}
		defer syscall.Close(pfd)
		var st syscall.Stat_t
		if err := syscall.Fstat(pfd, &st); err != nil {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			rights &= llFileRights
		}
		rule := landlockPathBeneath{allowed: rights & handled, parentFD: int32(pfd)}
		if _, _, errno := syscall.Syscall6(sysLandlockAddRule, fd, landlockRulePathBeneath, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("allow %s: %w", path, errno)
		}
		return nil
	}
	for _, p := range read {
		if err := add(p, readRights); err != nil {
			return err
		}
	}
	for _, p := range write {
		if err := add(p, writeRights); err != nil {
			return err
		}
	}
	for _, p := range devices {
		if err := add(p, llReadFile|llWriteFile); err != nil {
			return err
		}
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("no_new_privs: %w", errno)
	}
	if _, _, errno := syscall.RawSyscall(sysLandlockRestrictSelf, fd, 0, 0); errno != 0 {
		return fmt.Errorf("restrict self: %w", errno)
	}
	return nil
}
