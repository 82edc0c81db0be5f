package redissuite

import (
	"sync/atomic"
)

// A lockstep holds several processes' commands back so that they reach the
// server in rounds: in each round every process that still has a command to
// send sends exactly one, and the next round starts only when all of them
// have their answers. Two processes that both "GET the key, then SET it"
// therefore both GET before either SETs, every time: the race a real
// deployment hits once in a while happens on every run.
type lockstep struct {
	e       *env
	workers []*stepWorker
	round   atomic.Pointer[chan struct{}] // closed to let the current round go
	on      atomic.Bool
}

// stepWorker is one process taking part in a lockstep.
type stepWorker struct {
	p     *proc
	state atomic.Int32
}

// Where a lockstep worker is.
const (
	stepRunning  int32 = iota // between two commands, or waiting for an answer
	stepAtGate                // holding its next command until the round starts
	stepInWork                // inside the work function (held on the case's gate)
	stepFinished              // its call returned
)

// lockstep arms the gates of procs.
func (e *env) lockstep(procs []*proc) *lockstep {
	ls := &lockstep{e: e}
	first := make(chan struct{})
	ls.round.Store(&first)
	ls.on.Store(true)
	for _, p := range procs {
		w := &stepWorker{p: p}
		ls.workers = append(ls.workers, w)
		g := gateFunc(func(n int64, cmd string) {
			if !ls.on.Load() {
				return
			}
			ch := ls.round.Load() // before announcing: see conduct
			w.state.Store(stepAtGate)
			<-*ch
			e.h.Record(p.name, "sends "+cmd, "")
		})
		p.gate.Store(&g)
	}
	return ls
}

// conduct runs rounds until no worker has a command left to send, then
// calls openWork so that a worker inside its work can finish, and switches
// the lockstep off. It returns the names of workers that neither sent a
// command nor finished nor entered the work within a bounded wait: stuck
// inside the store.
func (ls *lockstep) conduct(openWork func()) (stuck []string) {
	defer ls.stop()
	quiet := func() bool {
		for _, w := range ls.workers {
			if w.state.Load() == stepRunning {
				return false
			}
		}
		return true
	}
	for range 1000 {
		if !ls.e.waitUntil(quiet) {
			for _, w := range ls.workers {
				if w.state.Load() == stepRunning {
					stuck = append(stuck, w.p.name)
				}
			}
			openWork()
			return stuck
		}
		var gated []*stepWorker
		for _, w := range ls.workers {
			if w.state.Load() == stepAtGate {
				gated = append(gated, w)
			}
		}
		if len(gated) == 0 {
			openWork()
			return nil
		}
		// A worker loads the round's channel before it announces itself at
		// the gate, so every announced worker waits on the channel closed
		// here, and the next command anyone sends waits for the next round.
		next := make(chan struct{})
		old := ls.round.Swap(&next)
		for _, w := range gated {
			w.state.Store(stepRunning)
		}
		close(*old)
	}
	openWork()
	return nil
}

// stop lets every held and future command through.
func (ls *lockstep) stop() {
	if ls.on.Swap(false) {
		close(*ls.round.Load())
	}
}
