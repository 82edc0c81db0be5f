// Package syncpoint is a drop-in replacement for package sync whose mutexes
// let a suite choose how goroutines interleave.
//
// The grader grades a lab that asks for it with a copy of the student's
// files in which only the `"sync"` import line is changed to this package
// (named sync, so the code and its line numbers stay the student's). Outside
// a Race, Mutex and RWMutex behave exactly like sync's. Inside a Race, every
// Lock, Unlock, RLock and RUnlock of a participant is a scheduling point:
// only one participant runs at a time, and at each point the next one is
// drawn from a seeded generator. A lookup and an insert taken under two
// separate lock sections are then interleaved with other participants on
// every run, on one CPU as on many, and a failing schedule replays from its
// seed.
//
// The subpackage suites/syncpoint/atomic does the same for sync/atomic
// (for a lab that asks, the grader points "sync/atomic" at it): every
// atomic operation of a participant is a scheduling point too, so a Load
// and the Add that acts on it are interleaved like two lock sections.
//
// Map is sync.Map with a scheduling point before each operation, so that a
// Load and the Store that acts on what it read are interleaved like two
// lock sections, and LoadOrStore is still one step.
//
// Code that synchronises with channels or select, or with sync/atomic in a
// lab whose atomics are not instrumented, runs uncontrolled; Race says so
// (Controlled is false) and the suite falls back to racing for real.
package syncpoint

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The rest of package sync, unchanged.
type (
	Locker    = sync.Locker
	Cond      = sync.Cond
	Once      = sync.Once
	Pool      = sync.Pool
	WaitGroup = sync.WaitGroup
)

// NewCond is sync.NewCond.
func NewCond(l Locker) *Cond { return sync.NewCond(l) }

// OnceFunc is sync.OnceFunc.
func OnceFunc(f func()) func() { return sync.OnceFunc(f) }

// OnceValue is sync.OnceValue.
func OnceValue[T any](f func() T) func() T { return sync.OnceValue(f) }

// OnceValues is sync.OnceValues.
func OnceValues[T1, T2 any](f func() (T1, T2)) func() (T1, T2) { return sync.OnceValues(f) }

// used is set by the first lock operation of any Mutex or RWMutex, and by
// the first operation of suites/syncpoint/atomic (see Point).
var used atomic.Bool

// Used reports whether code built with this package has locked a mutex, or
// made an operation of suites/syncpoint/atomic: whether the grader's
// instrumentation is in effect.
func Used() bool { return used.Load() }

// Point is the scheduling point of an instrumented operation other than a
// lock's, named op in the trace ("Int64.Load"): the hook of
// suites/syncpoint/atomic, which calls it before every atomic operation.
// It marks Used; called by a participant of a running, controlled Race, it
// passes the run to a participant drawn from the seed (possibly the caller)
// and returns when the caller's turn comes again. Anywhere else it returns
// at once. The operation itself is the caller's to make after Point
// returns; it must not block.
func Point(op string) {
	if !used.Load() {
		used.Store(true)
	}
	if s := current(); s != nil {
		s.point(op)
	}
}

// Map is sync.Map with a scheduling point (Point) before each operation:
// inside a Race, another participant may run between a Load and the Store
// that acts on it. Its zero value is empty and ready to use.
type Map struct {
	m sync.Map
}

// Load returns the value stored in the map for a key, or nil if no value
// is present. The ok result indicates whether value was found in the map.
func (m *Map) Load(key any) (value any, ok bool) { Point("Map.Load"); return m.m.Load(key) }

// Store sets the value for a key.
func (m *Map) Store(key, value any) { Point("Map.Store"); m.m.Store(key, value) }

// Clear deletes all the entries.
func (m *Map) Clear() { Point("Map.Clear"); m.m.Clear() }

// LoadOrStore returns the existing value for the key if present.
// Otherwise, it stores and returns the given value. The loaded result is
// true if the value was loaded, false if stored.
func (m *Map) LoadOrStore(key, value any) (actual any, loaded bool) {
	Point("Map.LoadOrStore")
	return m.m.LoadOrStore(key, value)
}

// LoadAndDelete deletes the value for a key, returning the previous value
// if any. The loaded result reports whether the key was present.
func (m *Map) LoadAndDelete(key any) (value any, loaded bool) {
	Point("Map.LoadAndDelete")
	return m.m.LoadAndDelete(key)
}

// Delete deletes the value for a key.
func (m *Map) Delete(key any) { Point("Map.Delete"); m.m.Delete(key) }

// Swap swaps the value for a key and returns the previous value if any.
// The loaded result reports whether the key was present.
func (m *Map) Swap(key, value any) (previous any, loaded bool) {
	Point("Map.Swap")
	return m.m.Swap(key, value)
}

// CompareAndSwap swaps the old and new values for key if the value stored
// in the map is equal to old.
func (m *Map) CompareAndSwap(key, old, new any) (swapped bool) {
	Point("Map.CompareAndSwap")
	return m.m.CompareAndSwap(key, old, new)
}

// CompareAndDelete deletes the entry for key if its value is equal to old.
func (m *Map) CompareAndDelete(key, old any) (deleted bool) {
	Point("Map.CompareAndDelete")
	return m.m.CompareAndDelete(key, old)
}

// Range calls f sequentially for each key and value present in the map,
// as sync.Map's Range does; the scheduling point is before it starts (f's
// own operations are points of their own).
func (m *Map) Range(f func(key, value any) bool) { Point("Map.Range"); m.m.Range(f) }

// Mutex is sync.Mutex with scheduling points.
type Mutex struct {
	mu sync.Mutex
}

// Lock locks m.
func (m *Mutex) Lock() {
	used.Store(true)
	s := current()
	if s == nil {
		m.mu.Lock()
		return
	}
	s.point("Lock")
	for !m.mu.TryLock() {
		if !s.wait("waits for Lock") {
			m.mu.Lock() // the race was let go
			return
		}
	}
}

// TryLock tries to lock m and reports whether it succeeded.
func (m *Mutex) TryLock() bool {
	used.Store(true)
	if s := current(); s != nil {
		s.point("TryLock")
	}
	return m.mu.TryLock()
}

// Unlock unlocks m.
func (m *Mutex) Unlock() {
	m.mu.Unlock()
	if s := current(); s != nil {
		s.point("Unlock")
	}
}

// RWMutex is sync.RWMutex with scheduling points.
type RWMutex struct {
	mu sync.RWMutex
}

// Lock locks rw for writing.
func (rw *RWMutex) Lock() {
	used.Store(true)
	s := current()
	if s == nil {
		rw.mu.Lock()
		return
	}
	s.point("Lock")
	for !rw.mu.TryLock() {
		if !s.wait("waits for Lock") {
			rw.mu.Lock() // the race was let go
			return
		}
	}
}

// TryLock tries to lock rw for writing.
func (rw *RWMutex) TryLock() bool {
	used.Store(true)
	if s := current(); s != nil {
		s.point("TryLock")
	}
	return rw.mu.TryLock()
}

// Unlock unlocks rw for writing.
func (rw *RWMutex) Unlock() {
	rw.mu.Unlock()
	if s := current(); s != nil {
		s.point("Unlock")
	}
}

// RLock locks rw for reading.
func (rw *RWMutex) RLock() {
	used.Store(true)
	s := current()
	if s == nil {
		rw.mu.RLock()
		return
	}
	s.point("RLock")
	for !rw.mu.TryRLock() {
		if !s.wait("waits for RLock") {
			rw.mu.RLock() // the race was let go
			return
		}
	}
}

// TryRLock tries to lock rw for reading.
func (rw *RWMutex) TryRLock() bool {
	used.Store(true)
	if s := current(); s != nil {
		s.point("TryRLock")
	}
	return rw.mu.TryRLock()
}

// RUnlock undoes a single RLock.
func (rw *RWMutex) RUnlock() {
	rw.mu.RUnlock()
	if s := current(); s != nil {
		s.point("RUnlock")
	}
}

// RLocker returns a Locker that locks rw for reading.
func (rw *RWMutex) RLocker() Locker { return (*rlocker)(rw) }

type rlocker RWMutex

func (r *rlocker) Lock()   { (*RWMutex)(r).RLock() }
func (r *rlocker) Unlock() { (*RWMutex)(r).RUnlock() }

// Result is what a Race did.
type Result struct {
	// Controlled is true when every participant ran under the schedule to
	// the end and reached scheduling points on the way (instrumented locks
	// or atomic operations): the interleaving was the seed's. It is false
	// when the code reached no scheduling point, or
	// blocked on something the schedule does not control (a channel, say)
	// and the race was let go to run freely.
	Controlled bool
	// Points counts the scheduling points the participants reached: zero
	// means their code took no instrumented lock and made no instrumented
	// atomic operation, and ran one after the other without interleaving
	// at all.
	Points int
	// Switches counts the times the schedule handed the run to another
	// participant.
	Switches int
	// Trace is the schedule, one line per scheduling point: "worker 3
	// Unlock -> worker 5 runs".
	Trace []string
}

// maxTrace bounds Result.Trace.
const maxTrace = 200

// Race runs each of fs in its own goroutine, one at a time, switching
// between them at the scheduling points of their mutex operations (and
// of their suites/syncpoint/atomic operations, see Point) in an order drawn
// from seed, and returns when all have returned. names label
// the participants in the trace (fs[i] is names[i]).
//
// A participant that blocks on something other than an instrumented lock
// (or spins without reaching a scheduling point) stops the schedule: inside a testing/synctest bubble, once every goroutine
// is durably blocked for a second of virtual time (or, outside one, after a
// second of real time), the race is let go and the participants run freely
// to the end.
func Race(seed int64, names []string, fs ...func()) Result {
	s := &schedule{
		rng:     rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		members: map[int64]*member{},
		done:    make(chan struct{}),
	}
	if !active.CompareAndSwap(nil, s) {
		panic("syncpoint.Race: a race is already running")
	}
	defer active.Store(nil)
	registered := make(chan struct{})
	var wg sync.WaitGroup
	for i, f := range fs {
		name := fmt.Sprintf("goroutine %d", i)
		if i < len(names) {
			name = names[i]
		}
		m := &member{name: name, wake: make(chan struct{}, 1)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.id = goroutineID()
			s.mu.Lock()
			s.members[m.id] = m
			s.order = append(s.order, m)
			if len(s.members) == len(fs) {
				close(registered)
			}
			s.mu.Unlock()
			<-m.wake // wait for the first turn
			defer s.leave(m)
			f()
		}()
	}
	<-registered
	go s.watchdog()
	s.mu.Lock()
	s.handOff(nil, "start", false)
	s.mu.Unlock()
	wg.Wait()
	close(s.done)
	s.mu.Lock()
	defer s.mu.Unlock()
	return Result{Controlled: !s.free.Load() && s.points > 0, Points: s.points, Switches: s.switches, Trace: s.trace}
}

var active atomic.Pointer[schedule]

type schedule struct {
	mu       sync.Mutex
	rng      *rand.Rand
	members  map[int64]*member // live participants by goroutine id
	order    []*member         // every participant, in start order, for stable choices
	running  *member
	points   int
	switches int
	progress atomic.Int64
	free     atomic.Bool
	trace    []string
	done     chan struct{}
}

type member struct {
	id       int64
	name     string
	wake     chan struct{}
	finished bool
}

// current returns the running race if the calling goroutine takes part in
// it and the race is still controlled.
func current() *schedule {
	s := active.Load()
	if s == nil || s.free.Load() {
		return nil
	}
	id := goroutineID()
	s.mu.Lock()
	_, ok := s.members[id]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	return s
}

// point is a scheduling point of the calling participant: the run goes to
// a participant drawn from the seed, possibly the caller itself.
func (s *schedule) point(op string) { s.yield(op, false) }

// wait is a point at which the caller cannot go on (the lock it wants is
// held): the run goes to another participant when there is one. It reports
// false once the race has been let go.
func (s *schedule) wait(op string) bool { return s.yield(op, true) }

// yield reports whether the race is still controlled.
func (s *schedule) yield(op string, excludeSelf bool) bool {
	s.progress.Add(1)
	s.mu.Lock()
	me := s.members[goroutineID()]
	if me == nil || s.free.Load() {
		s.mu.Unlock()
		return false
	}
	s.points++
	next := s.handOff(me, op, excludeSelf)
	s.mu.Unlock()
	if next == me {
		if excludeSelf {
			runtime.Gosched() // nobody else can run: let the lock's holder outside the race go on
		}
		return true
	}
	<-me.wake
	return !s.free.Load()
}

// handOff gives the run to a live participant drawn from the seed (not
// from, when excludeFrom is set and another is live) and returns it. from
// is nil at the start, and finished when a participant leaves. s.mu is
// held.
func (s *schedule) handOff(from *member, op string, excludeFrom bool) *member {
	var live []*member
	for _, m := range s.order {
		if !m.finished && !(excludeFrom && m == from) {
			live = append(live, m)
		}
	}
	if len(live) == 0 {
		if from != nil && !from.finished {
			return from
		}
		return nil
	}
	next := live[s.rng.IntN(len(live))]
	if len(s.trace) < maxTrace {
		who := "start"
		if from != nil {
			who = from.name + " " + op
		}
		s.trace = append(s.trace, who+" -> "+next.name+" runs")
	}
	if next != from {
		s.switches++
		s.running = next
		next.wake <- struct{}{}
	}
	return next
}

// leave removes a participant that returned and passes the run on.
func (s *schedule) leave(m *member) {
	s.progress.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	m.finished = true
	delete(s.members, m.id)
	if s.free.Load() {
		return
	}
	s.handOff(m, "returns", false) // m is finished: never drawn again
}

// watchdog lets the race go when no participant reaches a scheduling point
// for a second (virtual time inside a synctest bubble, where it can pass
// only once every goroutine is durably blocked).
func (s *schedule) watchdog() {
	last := s.progress.Load()
	for {
		select {
		case <-s.done:
			return
		case <-time.After(time.Second):
		}
		now := s.progress.Load()
		if now != last {
			last = now
			continue
		}
		s.mu.Lock()
		s.free.Store(true)
		for _, m := range s.order {
			select {
			case m.wake <- struct{}{}:
			default:
			}
		}
		s.mu.Unlock()
		return
	}
}

func goroutineID() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	f := strings.Fields(strings.TrimPrefix(string(buf[:n]), "goroutine "))
	if len(f) == 0 {
		return -1
	}
	id, _ := strconv.ParseInt(f[0], 10, 64)
	return id
}
