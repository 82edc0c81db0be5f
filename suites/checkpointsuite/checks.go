package checkpointsuite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// nopSink and nopStore are what checkOptions builds runners with.
type nopSink struct{}

func (nopSink) Apply(context.Context, string, string) error { return nil }

func checkOptions(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	for _, c := range []struct {
		name string
		opts task.RunnerOptions
	}{
		{"no store", task.RunnerOptions{Sink: nopSink{}, Token: 1}},
		{"no sink", task.RunnerOptions{Store: w.store, Token: 1}},
		{"token 0", task.RunnerOptions{Store: w.store, Sink: nopSink{}}},
	} {
		r, err := e.buildRunner(c.opts)
		h.Record("test", "NewRunner("+c.name+")", outcome(err, "a runner"))
		if !errors.Is(err, task.ErrInvalidRunner) {
			t.Errorf("NewRunner(%s) = %v, %v, want an error wrapping ErrInvalidRunner", c.name, r, err)
		}
	}

	// Neither clock nor random source: the defaults.
	fakeclock.Advance(90 * time.Minute)
	sink := newService()
	var mu sync.Mutex
	var got []time.Time
	var nums []uint64
	steps := []task.TaskStep{{Name: "stamp", Effect: func(rec task.Recorder) (string, error) {
		now, n := rec.Now(), rec.Rand()
		mu.Lock()
		got, nums = append(got, now), append(nums, n)
		mu.Unlock()
		return fmt.Sprintf("stamp %s %d", now.UTC().Format(time.RFC3339Nano), n), nil
	}}}
	crashing := &crashOnce{sink: sink}
	r := suites.Construct(func() Runner {
		r, err := e.buildRunner(task.RunnerOptions{Store: w.store, Sink: crashing, Token: 1})
		if err != nil {
			t.Fatalf("NewRunner(Options{Store, Sink, Token: 1}) = %v, want a runner (Now and Rand nil mean the defaults)", err)
		}
		return r
	})
	h.Record("test", "NewRunner(Options{Store, Sink, Token: 1})", "a runner with no clock and no random source")
	// Time passes between building the runner and running it: the default
	// clock is time.Now itself, read when the step asks, not the moment the
	// runner was built (time.Now().UTC is a method value bound to that
	// moment).
	w.advance(10*time.Minute, "the runner built, its task starts")
	err := r.Run(context.Background(), "defaults", steps)
	h.Record("process 1", "Run(defaults)", outcome(err, "nil"))
	if !errors.Is(err, errService) {
		t.Fatalf("Run(defaults) with the effect service failing after performing = %v, want an error wrapping %v", err, errService)
	}
	mu.Lock()
	first := slices.Clone(got)
	mu.Unlock()
	if len(first) != 1 || !first[0].Equal(fakeclock.Now()) {
		t.Fatalf("with Options.Now nil, the step's Recorder.Now() = %v, want time.Now(), %v", first, fakeclock.Now())
	}
	fakeclock.Advance(time.Hour)
	r2 := suites.Construct(func() Runner {
		r, _ := e.buildRunner(task.RunnerOptions{Store: w.store, Sink: sink, Token: 2})
		return r
	})
	if r2 == nil {
		t.Fatal("NewRunner(Options{Store, Sink, Token: 2}) returned no runner")
	}
	err = r2.Run(context.Background(), "defaults", steps)
	h.Record("process 2", "Run(defaults) an hour later", outcome(err, "nil"))
	if err != nil {
		t.Fatalf("Run(defaults) resumed an hour later = %v, want nil: the step's values (drawn from the default clock and source) replayed, the same payload", err)
	}
	mu.Lock()
	got2, nums2 := slices.Clone(got), slices.Clone(nums)
	mu.Unlock()
	if len(got2) != 2 || !got2[1].Equal(got2[0]) || nums2[1] != nums2[0] {
		t.Fatalf("the step got %v and %v on its two runs, want the first run's values back on the second", got2, nums2)
	}

	// Another runner with the default source, on another task, draws
	// another number: the default is math/rand/v2's randomly seeded Uint64,
	// not a generator with a fixed seed, which gives every runner (every
	// worker process) the same "random" discount codes. Two draws of a
	// random 64-bit source are equal once in 2^64.
	r3 := suites.Construct(func() Runner {
		r, _ := e.buildRunner(task.RunnerOptions{Store: w.store, Sink: sink, Token: 1})
		return r
	})
	if r3 == nil {
		t.Fatal("NewRunner(Options{Store, Sink, Token: 1}) returned no runner")
	}
	err = r3.Run(context.Background(), "defaults-2", steps)
	h.Record("process 3", "Run(defaults-2) with its own default source", outcome(err, "nil"))
	if err != nil {
		t.Fatalf("Run(defaults-2) = %v, want nil", err)
	}
	mu.Lock()
	nums3 := slices.Clone(nums)
	mu.Unlock()
	if len(nums3) != 3 || nums3[2] == nums3[0] {
		t.Fatalf("two runners built with no random source drew %v: the same number, want the default to be math/rand/v2's randomly seeded Uint64, not a fixed seed", nums3)
	}
}

// crashOnce performs the first effect and loses the answer.
type crashOnce struct {
	sink *service
	done bool
}

func (c *crashOnce) Apply(ctx context.Context, key, payload string) error {
	if _, err := c.sink.apply(key, payload); err != nil {
		return err
	}
	if !c.done {
		c.done = true
		return errService
	}
	return nil
}

func checkRunsInOrder(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	p := w.newProc("process 1", 3, nil)
	p.mustFinish("task-1", p.steps("task-1", drawSteps))
	w.mustBeDone("task-1", 3, 3, "after one uninterrupted run")
	if got := w.runsBy("process 1", "task-1"); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("process 1 ran steps %v, want [0 1 2]", got)
	}

	h.Note("a finished task is run again by a new runner")
	puts := w.kv.putCount()
	p2 := w.newProc("process 2", 4, nil)
	p2.mustFinish("task-1", p2.steps("task-1", drawSteps))
	if got := w.runsBy("process 2", "task-1"); len(got) != 0 {
		t.Fatalf("a runner given a finished task ran steps %v, want none", got)
	}
	if _, _, _, applies := p2.counts(); len(applies) != 0 {
		t.Fatalf("a runner given a finished task applied %d effects, want none", len(applies))
	}
	_, _, req := w.sink.snapshot()
	for i := range 3 {
		if n := req[stepKey("task-1", i)]; n != 1 {
			t.Fatalf("the effect service got %d requests for %s, want 1", n, stepKey("task-1", i))
		}
	}
	if n := w.kv.putCount() - puts; n != 0 {
		t.Fatalf("a runner given a finished task stored %d checkpoint(s), want none: it has nothing to do", n)
	}

	h.Note("zero steps")
	p3 := w.newProc("process 3", 1, nil)
	before := w.kv.putCount()
	p3.mustFinish("empty", nil)
	if n := w.kv.putCount() - before; n != 0 {
		t.Fatalf("Run with zero steps stored %d checkpoint(s), want none: there is nothing to checkpoint", n)
	}
	if _, _, _, applies := p3.counts(); len(applies) != 0 {
		t.Fatalf("Run with zero steps applied %d effects, want none", len(applies))
	}

	h.Note("one step")
	p4 := w.newProc("process 4", 1, nil)
	p4.mustFinish("single", p4.steps("single", spec{{"rand"}}))
	w.mustBeDone("single", 1, 1, "after a one-step task ran")

	h.Note("no task ID")
	p5 := w.newProc("process 5", 1, nil)
	err := p5.run("", p5.steps("", plainSteps), returned)
	if !errors.Is(err, task.ErrNoTaskID) {
		t.Fatalf("Run(\"\") = %v, want an error wrapping ErrNoTaskID", err)
	}
	if _, _, eff, applies := p5.counts(); eff != 0 || len(applies) != 0 {
		t.Fatalf("Run(\"\") computed %d steps and applied %d effects, want none", eff, len(applies))
	}
}

// crashPoints are the points of step i at which a process can die.
func crashPoints(i int) []struct {
	point string
	a     action
} {
	return []struct {
		point string
		a     action
	}{
		{fmt.Sprintf("effect/%d", i), crashBefore},
		{fmt.Sprintf("effect/%d", i), crashAfter},
		{fmt.Sprintf("values/%d", i), crashBefore},
		{fmt.Sprintf("values/%d", i), crashAfter},
		{fmt.Sprintf("apply/%d", i), crashBefore},
		{fmt.Sprintf("apply/%d", i), crashAfter},
		{fmt.Sprintf("commit/%d", i), crashBefore},
		{fmt.Sprintf("commit/%d", i), crashAfter},
	}
}

func checkCrashAtEveryPoint(t *testing.T, h *suites.History, e *target) {
	for i := range len(drawSteps) {
		for _, c := range crashPoints(i) {
			if c.point == fmt.Sprintf("values/%d", i) && len(drawSteps[i]) == 0 {
				continue // a step that draws nothing has no values to commit
			}
			h.Restart()
			h.Note("process 1 %s %s", c.a, c.point)
			w := e.newWorld()
			id := fmt.Sprintf("task-%d-%s-%d", i, c.point[:len(c.point)-2], c.a)
			p1 := w.newProc("process 1", 1, map[string]action{c.point: c.a})
			if err := p1.run(id, p1.steps(id, drawSteps), crashed); err != nil {
				t.Fatal(err)
			}
			w.advance(time.Hour, "a new process takes the task over")
			p2 := w.newProc("process 2", 2, nil)
			p2.mustFinish(id, p2.steps(id, drawSteps))
			last := c.point == fmt.Sprintf("commit/%d", len(drawSteps)-1) && c.a == crashAfter
			token := task.FencingToken(2)
			if last {
				token = 1 // process 1 finished the task before it died
			}
			w.mustBeDone(id, len(drawSteps), token, fmt.Sprintf("after process 1 %s %s and process 2 resumed", c.a, c.point))
			// Once the step's values were durable (committed, or out in
			// the world with its effect), a run of it again replays them.
			durable := (c.point == fmt.Sprintf("values/%d", i) && c.a == crashAfter) ||
				c.point == fmt.Sprintf("apply/%d", i) || (c.point == fmt.Sprintf("commit/%d", i) && c.a == crashBefore)
			if runs := w.runsOf(id, i); durable && len(drawSteps[i]) > 0 {
				for _, r := range runs[1:] {
					if !slices.Equal(r.values, runs[0].values) {
						t.Fatalf("step %d got %v when %s ran it again, want %v, the values of its first run, which were durable before the crash", i, r.values, r.proc, runs[0].values)
					}
				}
			}
			// A step whose checkpoint was committed before the crash
			// must not run again.
			done := i
			if c.point == fmt.Sprintf("commit/%d", i) && c.a == crashAfter {
				done = i + 1
			}
			if got := w.runsBy("process 2", id); (last && len(got) > 0) || (!last && (len(got) == 0 || got[0] != done)) {
				t.Fatalf("after process 1 %s %s, process 2 ran steps %v, want it to start at step %d", c.a, c.point, got, done)
			}
			if t.Failed() {
				return
			}
		}
	}
}

func checkNotRunAgain(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	four := spec{{"rand"}, {}, {"now"}, {}}
	p1 := w.newProc("process 1", 1, map[string]action{"commit/1": crashAfter})
	if err := p1.run("task-1", p1.steps("task-1", four), crashed); err != nil {
		t.Fatal(err)
	}
	w.advance(10*time.Minute, "process 2 takes the task over")
	p2 := w.newProc("process 2", 2, nil)
	p2.mustFinish("task-1", p2.steps("task-1", four))
	if got := w.runsBy("process 2", "task-1"); !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("resuming from a checkpoint at step 2 of 4, process 2 ran steps %v, want [2 3]: steps 0 and 1 are done", got)
	}
	_, _, _, applies := p2.counts()
	var keys []string
	for _, a := range applies {
		keys = append(keys, a.key)
	}
	if want := []string{stepKey("task-1", 2), stepKey("task-1", 3)}; !slices.Equal(keys, want) {
		t.Fatalf("process 2 applied %q, want %q", keys, want)
	}
	w.mustBeDone("task-1", 4, 2, "after process 2 finished")

	h.Note("a checkpoint one step from the end")
	p3 := w.newProc("process 3", 1, map[string]action{"commit/2": crashAfter})
	if err := p3.run("task-2", p3.steps("task-2", four), crashed); err != nil {
		t.Fatal(err)
	}
	p4 := w.newProc("process 4", 2, nil)
	p4.mustFinish("task-2", p4.steps("task-2", four))
	if got := w.runsBy("process 4", "task-2"); !slices.Equal(got, []int{3}) {
		t.Fatalf("resuming from a checkpoint at step 3 of 4, process 4 ran steps %v, want [3]", got)
	}
	w.mustBeDone("task-2", 4, 2, "after process 4 finished")

	// Total is the number of steps of the Run that commits, not a number
	// carried over from the checkpoint it loaded.
	h.Note("the task gained a step between two runs: a checkpoint at step 2 of 4, resumed with five steps")
	five := spec{{"rand"}, {}, {"now"}, {}, {}}
	p5 := w.newProc("process 5", 1, map[string]action{"commit/1": crashAfter})
	if err := p5.run("task-3", p5.steps("task-3", four), crashed); err != nil {
		t.Fatal(err)
	}
	p6 := w.newProc("process 6", 2, nil)
	p6.mustFinish("task-3", p6.steps("task-3", five))
	if got := w.runsBy("process 6", "task-3"); !slices.Equal(got, []int{2, 3, 4}) {
		t.Fatalf("resuming from a checkpoint at step 2 with five steps, process 6 ran steps %v, want [2 3 4]", got)
	}
	if got := p6.runner.Progress(); got.Total != 5 {
		t.Fatalf("Progress() after a run of five steps = %+v, want Total 5: the number of steps of this Run, not the loaded checkpoint's", got)
	}
	w.mustBeDone("task-3", 5, 2, "after process 6 finished the five steps (the checkpoint's Total is this Run's number of steps)")
}

func checkKeys(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	ids := []string{"tâche-ü-契約", "a", "a1", "a/1"}
	many := make(spec, 12)
	for i, id := range ids {
		p := w.newProc(fmt.Sprintf("process %d", i+1), 1, nil)
		p.mustFinish(id, p.steps(id, many))
		_, _, _, applies := p.counts()
		for s, a := range applies {
			if want := stepKey(id, s); a.key != want {
				t.Fatalf("step %d of %s was applied under the key %q, want %q (the task ID, \"/\", the step index)", s, id, a.key, want)
			}
		}
		w.mustBeDone(id, len(many), 1, "after "+id+" ran")
	}

	h.Note("a step run again by another runner sends the same key")
	p := w.newProc("process 5", 7, map[string]action{"apply/1": crashAfter})
	if err := p.run("task-9", p.steps("task-9", drawSteps), crashed); err != nil {
		t.Fatal(err)
	}
	q := w.newProc("process 6", 8, nil)
	q.mustFinish("task-9", q.steps("task-9", drawSteps))
	_, _, _, applies := q.counts()
	if len(applies) == 0 || applies[0].key != stepKey("task-9", 1) {
		t.Fatalf("process 6 applied %v first, want step 1 again under %q", applies, stepKey("task-9", 1))
	}
	w.mustBeDone("task-9", 3, 8, "after process 6 finished")
}

func checkCheckpointAfterEffect(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	p := w.newProc("process 1", 1, nil)
	p.mustFinish("task-1", p.steps("task-1", drawSteps))
	_, _, _, applies := p.counts()
	for _, a := range applies {
		if a.found && a.durable.Next > a.step {
			t.Fatalf("when step %d's effect was applied, the durable checkpoint already said %s: a checkpoint written before the effect skips the step forever if the process dies in between", a.step, a.durable)
		}
	}

	for _, a := range []action{failBefore, failAfter, crashBefore} {
		h.Note("the effect service %s performing step 1's effect", map[action]string{failBefore: "fails before", failAfter: "performs, then the answer is lost, after", crashBefore: "is never reached: the process dies before"}[a])
		id := fmt.Sprintf("fail-%d", a)
		want := returned
		if a == crashBefore {
			want = crashed
		}
		p := w.newProc("process "+id, 1, map[string]action{"apply/1": a})
		err := p.run(id, p.steps(id, drawSteps), want)
		if want == returned && !errors.Is(err, errService) {
			t.Fatalf("Run(%s) with the effect service failing = %v, want an error wrapping %v", id, err, errService)
		}
		if cp, ok := w.kv.peek(id); !ok || cp.Next != 1 {
			t.Fatalf("after step 1's effect failed, the checkpoint is %s (found %v), want step 1: the effect is not known to be durable", cp, ok)
		}
		if got := w.runsBy(p.name, id); !slices.Equal(got, []int{0, 1}) {
			t.Fatalf("after step 1's effect failed, the runner ran steps %v, want [0 1]: it must stop", got)
		}
		if a == failAfter {
			h.Note("the same runner, still holding its grant, runs the task again")
			p.mustFinish(id, p.steps(id, drawSteps))
			w.mustBeDone(id, 3, 1, "after the same runner ran the task again")
			continue
		}
		q := w.newProc("process "+id+"'", 2, nil)
		q.mustFinish(id, q.steps(id, drawSteps))
		w.mustBeDone(id, 3, 2, "after a new runner resumed")
	}

	// ErrEffectMismatch is a failed Apply like any other: the service
	// performed nothing for this payload. Taking it for "already applied"
	// marks done a step whose effect, as this run computed it, never
	// happened.
	h.Note("the effect service refuses step 1: its key was applied before with another payload")
	id := "mismatch"
	w.sink.seed(stepKey(id, 1), payloadOf(id, 1, stepNames[1], []string{"a quote computed otherwise"}))
	m := w.newProc("process mismatch", 1, nil)
	err := m.run(id, m.steps(id, drawSteps), returned)
	if !errors.Is(err, task.ErrEffectMismatch) {
		t.Fatalf("Run(%s) with the effect service refusing step 1's payload = %v, want an error wrapping ErrEffectMismatch", id, err)
	}
	if cp, ok := w.kv.peek(id); !ok || cp.Next != 1 {
		t.Fatalf("after the effect service refused step 1 (ErrEffectMismatch), the checkpoint is %s (found %v), want step 1: nothing was performed for it", cp, ok)
	}
	if got := w.runsBy(m.name, id); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("after the effect service refused step 1 (ErrEffectMismatch), the runner ran steps %v, want [0 1]: it must stop", got)
	}
}

func checkReplay(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	for _, c := range []struct {
		point string
		a     action
		later time.Duration
	}{
		{"apply/1", crashAfter, time.Hour},
		{"values/1", crashAfter, 7 * 24 * time.Hour},
		{"commit/1", crashBefore, time.Hour},
		{"apply/1", failAfter, 24 * time.Hour},
	} {
		h.Note("process 1 %s %s", c.a, c.point)
		id := fmt.Sprintf("task-%s-%d", c.point, c.a)
		want := crashed
		if c.a == failAfter {
			want = returned
		}
		p := w.newProc("process 1 of "+id, 1, map[string]action{c.point: c.a})
		if err := p.run(id, p.steps(id, drawSteps), want); want == returned && err == nil {
			t.Fatalf("Run(%s) with the effect's answer lost = nil, want an error", id)
		}
		_, _, _, applies := p.counts()
		for _, a := range applies {
			vals := w.runsOf(id, a.step)[0].values
			var stored []task.RecordedValue
			for _, v := range a.durable.Values {
				if v.Step == a.step {
					stored = append(stored, v)
				}
			}
			if len(stored) != len(vals) {
				t.Fatalf("when step %d's effect was applied, the durable checkpoint held %d of the %d values it drew (%v): values that shaped an effect must be durable before it", a.step, len(stored), len(vals), a.durable.Values)
			}
		}
		w.advance(c.later, "a new process with its own random source resumes the task")
		q := w.newProc("process 2 of "+id, 2, nil)
		q.mustFinish(id, q.steps(id, drawSteps))
		runs := w.runsOf(id, 1)
		if len(runs) < 2 {
			t.Fatalf("step 1 ran %d times, want 2 (once by each process)", len(runs))
		}
		if !slices.Equal(runs[1].values, runs[0].values) {
			t.Fatalf("step 1 got %v when run again %v later, want %v: the recorded values, replayed", runs[1].values, c.later, runs[0].values)
		}
		w.mustBeDone(id, 3, 2, "after the resumed run")
		cp, _ := w.kv.peek(id)
		var kinds []string
		for _, v := range cp.Values {
			kinds = append(kinds, fmt.Sprintf("%d:%s", v.Step, v.Kind))
		}
		if want := []string{"0:time", "1:rand", "1:time", "1:rand"}; !slices.Equal(kinds, want) {
			t.Fatalf("the finished checkpoint's values are %v, want %v: each value once, in the order drawn, with its step", cp.Values, want)
		}
		if v := cp.Values[0]; !v.Time.Equal(parseTime(runs[0].values, w.runsOf(id, 0)[0].values)) {
			t.Fatalf("the checkpoint's time for step 0 is %v, want the time step 0 got, %v", v.Time, w.runsOf(id, 0)[0].values)
		}
	}
}

// parseTime returns the first time step 0 got.
func parseTime(_ []string, vals []string) time.Time {
	ts, _ := time.Parse(time.RFC3339Nano, vals[0])
	return ts
}

func checkZombie(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	h.Note("process A runs step 0, then pauses inside step 1's effect")
	a := w.newProc("process A", 5, map[string]action{"apply/1": pauseBefore})
	if err := a.run("task-1", a.steps("task-1", drawSteps), paused); err != nil {
		t.Fatal(err)
	}
	w.advance(time.Minute, "A's lease expired; process B is granted the task with token 6")
	b := w.newProc("process B", 6, nil)
	b.mustFinish("task-1", b.steps("task-1", drawSteps))
	w.mustBeDone("task-1", 3, 6, "after B finished")
	_, _, _, before := a.counts()
	a.wake()
	err := a.await(returned)
	if !errors.Is(err, task.ErrStaleToken) {
		t.Fatalf("the zombie A's Run = %v, want an error wrapping ErrStaleToken: its checkpoint must be refused", err)
	}
	_, _, _, after := a.counts()
	if len(after) != len(before) {
		t.Fatalf("after its checkpoint was refused, A applied %d more effects, want none: it must stop at once", len(after)-len(before))
	}
	w.mustBeDone("task-1", 3, 6, "after the zombie A woke up")
	w.mustNotMoveBack("task-1")

	h.Note("process E pauses after computing step 1, before committing its values; process F takes over")
	pe := w.newProc("process E", 7, map[string]action{"effect/1": pauseAfter})
	if err := pe.run("task-2", pe.steps("task-2", drawSteps), paused); err != nil {
		t.Fatal(err)
	}
	pf := w.newProc("process F", 8, nil)
	pf.mustFinish("task-2", pf.steps("task-2", drawSteps))
	_, _, _, before = pe.counts()
	pe.wake()
	if err := pe.await(returned); !errors.Is(err, task.ErrStaleToken) {
		t.Fatalf("the zombie E's Run = %v, want an error wrapping ErrStaleToken: its values' commit must be refused", err)
	}
	if _, _, _, after := pe.counts(); len(after) != len(before) {
		t.Fatalf("after the commit of its values was refused, E applied %d effects, want none", len(after)-len(before))
	}
	w.mustBeDone("task-2", 3, 8, "after the zombie E woke up")
	w.mustNotMoveBack("task-2")

	d := w.newProc("process D", 6, map[string]action{"commit/0": crashAfter})
	if err := d.run("task-3", d.steps("task-3", drawSteps), crashed); err != nil {
		t.Fatal(err)
	}
	z := w.newProc("process Z", 5, nil)
	err = z.run("task-3", z.steps("task-3", drawSteps), returned)
	if !errors.Is(err, task.ErrStaleToken) {
		t.Fatalf("Run(task-3) with token 5, on a checkpoint with token 6 = %v, want an error wrapping ErrStaleToken", err)
	}
	if _, _, eff, applies := z.counts(); eff != 0 || len(applies) != 0 {
		t.Fatalf("a runner whose token is below the checkpoint's computed %d steps and applied %d effects, want none", eff, len(applies))
	}
	w.mustNotMoveBack("task-3")
}

func checkStoreFences(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	ctx := context.Background()
	s := w.store
	commit := func(cp task.Checkpoint) error {
		err := s.Commit(ctx, cp)
		h.Record("test", "Commit("+cp.String()+")", outcome(err, "committed"))
		return err
	}
	load := func(id string) (task.Checkpoint, bool) {
		cp, ok, err := s.Load(ctx, id)
		h.Record("test", "Load("+id+")", outcome(err, cp.String()))
		if err != nil {
			t.Fatalf("Load(%s) = %v, want no error", id, err)
		}
		return cp, ok
	}
	if _, ok := load("nothing"); ok {
		t.Fatal("Load of a task never committed reported a checkpoint, want false")
	}
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	first := task.Checkpoint{TaskID: "tâche-é", Token: 5, Next: 1, Total: 3, Values: []task.RecordedValue{{Step: 0, Kind: task.RecordedTime, Time: at}, {Step: 0, Kind: task.RecordedRand, Rand: 1<<64 - 1}}}
	if err := commit(first); err != nil {
		t.Fatalf("Commit(%s) on a task with no checkpoint = %v, want nil", first, err)
	}
	// The store keeps what was committed, not the caller's slice: a caller
	// that reuses its Values after Commit, or changes the ones Load gave it,
	// changes nothing stored, even over a KV that keeps the slice it is
	// given (an in-memory KV may).
	h.Note("the KV now keeps the checkpoint Put gives it as it is, Values slice and all, and Get hands that slice out")
	w.kv.mu.Lock()
	w.kv.aliasing = true
	w.kv.mu.Unlock()
	vals := []task.RecordedValue{{Step: 0, Kind: task.RecordedRand, Rand: 4417}}
	if err := commit(task.Checkpoint{TaskID: "copied", Token: 3, Total: 2, Values: vals}); err != nil {
		t.Fatalf("Commit on a task with no checkpoint = %v, want nil", err)
	}
	vals[0].Rand = 1
	if cp, _ := load("copied"); len(cp.Values) != 1 || cp.Values[0].Rand != 4417 {
		t.Fatalf("after the committer changed its own Values slice, Load = %s, want the committed value 4417: the store must keep a copy", cp)
	} else {
		cp.Values[0].Rand = 2
	}
	if cp, _ := load("copied"); len(cp.Values) != 1 || cp.Values[0].Rand != 4417 {
		t.Fatalf("after a loader changed the Values Load gave it, Load = %s, want the committed value 4417: Load must return a copy", cp)
	}
	w.kv.mu.Lock()
	w.kv.aliasing = false
	w.kv.mu.Unlock()
	if err := commit(task.Checkpoint{TaskID: "zero", Next: 1, Total: 1}); !errors.Is(err, task.ErrStaleToken) {
		t.Fatalf("Commit with token 0 = %v, want an error wrapping ErrStaleToken (0 is never granted)", err)
	}
	if _, ok := load("zero"); ok {
		t.Fatal("a commit with token 0 was stored")
	}
	if err := commit(task.Checkpoint{TaskID: "tâche-é", Token: 4, Next: 0, Total: 3}); !errors.Is(err, task.ErrStaleToken) {
		t.Fatalf("Commit with token 4 after token 5 = %v, want an error wrapping ErrStaleToken", err)
	}
	cp, ok := load("tâche-é")
	if !ok || !sameCheckpoint(cp, first) {
		t.Fatalf("Load after a refused commit = %s, want %s unchanged", cp, first)
	}
	if err := commit(task.Checkpoint{TaskID: "other", Token: 2, Next: 1, Total: 2}); err != nil {
		t.Fatalf("Commit with token 2 to another task = %v, want nil: tasks are fenced independently", err)
	}
	second := first
	second.Next = 2
	if err := commit(second); err != nil {
		t.Fatalf("Commit with the same token 5 = %v, want nil (the same runner's next step)", err)
	}
	third := task.Checkpoint{TaskID: "tâche-é", Token: 9, Next: 3, Total: 3}
	if err := commit(third); err != nil {
		t.Fatalf("Commit with token 9 after 5 = %v, want nil", err)
	}
	if cp, _ := load("tâche-é"); !sameCheckpoint(cp, third) {
		t.Fatalf("Load = %s, want %s", cp, third)
	}
	if err := commit(second); !errors.Is(err, task.ErrStaleToken) {
		t.Fatalf("Commit with token 5 after 9 = %v, want an error wrapping ErrStaleToken", err)
	}
	w.mustNotMoveBack("tâche-é")
}

func sameCheckpoint(a, b task.Checkpoint) bool {
	if a.TaskID != b.TaskID || a.Token != b.Token || a.Next != b.Next || a.Total != b.Total || len(a.Values) != len(b.Values) {
		return false
	}
	for i := range a.Values {
		x, y := a.Values[i], b.Values[i]
		if x.Step != y.Step || x.Kind != y.Kind || x.Rand != y.Rand || !x.Time.Equal(y.Time) {
			return false
		}
	}
	return true
}

func checkStoreAtomic(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	ctx := context.Background()
	if err := w.store.Commit(ctx, task.Checkpoint{TaskID: "task-1", Token: 4, Next: 1, Total: 3}); err != nil {
		t.Fatalf("Commit(token 4) = %v, want nil", err)
	}
	held, release := w.kv.holdNextGet()
	defer release()
	zombie := task.Checkpoint{TaskID: "task-1", Token: 5, Next: 2, Total: 3}
	newer := task.Checkpoint{TaskID: "task-1", Token: 6, Next: 3, Total: 3}
	var errA, errB error
	a := suites.Go(func() { suites.Guard(t, func() { errA = w.store.Commit(ctx, zombie) }) })
	select {
	case <-held:
	case <-a.Done():
		t.Skipf("%s the store's Commit made no Get to hold (it returned %v), so the interleaving cannot be arranged", "inconclusive:", errA)
	}
	h.Record("runner A", "Commit("+zombie.String()+")", "the store reads the task's checkpoint; the read is held still")
	b := suites.Go(func() { suites.Guard(t, func() { errB = w.store.Commit(ctx, newer) }) })
	bDone := b.Settle()
	h.Record("runner B", "Commit("+newer.String()+")", map[bool]string{true: "returned while A's commit was between its check and its write", false: "waits for A's commit"}[bDone])
	release()
	a.Wait()
	b.Wait()
	h.Record("runner A", "Commit returns", outcome(errA, "committed"))
	h.Record("runner B", "Commit returns", outcome(errB, "committed"))
	cp, _ := w.kv.peek("task-1")
	if cp.Token != 6 || cp.Next != 3 {
		t.Fatalf("after commits with tokens 5 and 6 raced, the checkpoint is %s, want token 6 at step 3: the commit with 5 was checked, then landed after 6", cp)
	}
	w.mustNotMoveBack("task-1")

	// The task stays one atomic step for every commit, however many wait:
	// here a third commit arrives while the second, woken when the first
	// finished, is between its check and its write. A per-task lock
	// dropped from its map while a commit still waits on it lets the third
	// take a fresh lock and land in between.
	h.Note("task-2: three commits; the second waits for the first, and the third arrives while the second is between its check and its write")
	base := task.Checkpoint{TaskID: "task-2", Token: 4, Next: 1, Total: 3}
	if err := w.store.Commit(ctx, base); err != nil {
		t.Fatalf("Commit(%s) = %v, want nil", base, err)
	}
	first := task.Checkpoint{TaskID: "task-2", Token: 5, Next: 2, Total: 3}
	third := task.Checkpoint{TaskID: "task-2", Token: 6, Next: 3, Total: 3}
	heldA, releaseA := w.kv.holdNextGet()
	defer releaseA()
	var err1, err2, err3 error
	c1 := suites.Go(func() { suites.Guard(t, func() { err1 = w.store.Commit(ctx, first) }) })
	select {
	case <-heldA:
	case <-c1.Done():
		return // no Get to hold, as above
	}
	h.Record("runner A", "Commit("+first.String()+")", "the store reads the task's checkpoint; the read is held still")
	c2 := suites.Go(func() { suites.Guard(t, func() { err2 = w.store.Commit(ctx, first) }) })
	h.Record("runner B", "Commit("+first.String()+") again, its first reply lost", map[bool]string{true: "returned while A's commit was between its check and its write", false: "waits for A's commit"}[c2.Settle()])
	heldB, releaseB := w.kv.holdNextGet()
	defer releaseB()
	releaseA()
	c1.Wait()
	h.Record("runner A", "Commit returns", outcome(err1, "committed"))
	select {
	case <-heldB:
		h.Record("runner B", "its commit goes on", "the store reads the task's checkpoint (token 5); the read is held still")
	case <-c2.Done():
	}
	c3 := suites.Go(func() { suites.Guard(t, func() { err3 = w.store.Commit(ctx, third) }) })
	h.Record("runner C", "Commit("+third.String()+")", map[bool]string{true: "returned while B's commit was between its check and its write", false: "waits for B's commit"}[c3.Settle()])
	releaseB()
	c2.Wait()
	c3.Wait()
	h.Record("runner B", "Commit returns", outcome(err2, "committed"))
	h.Record("runner C", "Commit returns", outcome(err3, "committed"))
	if cp, _ := w.kv.peek("task-2"); cp.Token != 6 || cp.Next != 3 {
		t.Fatalf("after three commits on task-2 (token 5, token 5 again, then token 6 while the second was between its check and its write), the checkpoint is %s, want token 6 at step 3: the commit with 6 landed between the second commit's check and its write, which then wrote token 5 over it", cp)
	}
	w.mustNotMoveBack("task-2")
}

func checkFailures(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	ctx := context.Background()
	h.Note("the store over a failing KV")
	w.kv.failCall("get", 1, false)
	if _, _, err := w.store.Load(ctx, "task-s"); !errors.Is(err, errStorage) {
		t.Fatalf("Load with the KV's Get failing = %v, want an error wrapping %v", err, errStorage)
	}
	puts := w.kv.putCount()
	w.kv.failCall("get", 1, false)
	if err := w.store.Commit(ctx, task.Checkpoint{TaskID: "task-s", Token: 1, Next: 1, Total: 2}); !errors.Is(err, errStorage) {
		t.Fatalf("Commit with the KV's Get failing = %v, want an error wrapping %v", err, errStorage)
	}
	if w.kv.putCount() != puts {
		t.Fatal("Commit wrote to the KV after its Get failed: without the task's token there is no check, so no write")
	}
	w.kv.failCall("put", 1, false)
	if err := w.store.Commit(ctx, task.Checkpoint{TaskID: "task-s", Token: 1, Next: 1, Total: 2}); !errors.Is(err, errStorage) {
		t.Fatalf("Commit with the KV's Put failing = %v, want an error wrapping %v", err, errStorage)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := w.store.Commit(cctx, task.Checkpoint{TaskID: "task-c", Token: 1, Next: 1, Total: 2}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	if _, _, err := w.store.Load(cctx, "task-c"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	if _, ok := w.kv.peek("task-c"); ok {
		t.Fatal("a Commit with a cancelled context was stored")
	}

	for _, c := range []struct {
		point string
		want  error
		steps []int // the steps the runner must have computed
	}{
		{"load", errStorage, nil},
		{"values/1", errStorage, []int{0, 1}},
		{"commit/0", errStorage, []int{0}},
		{"effect/1", errStep, []int{0, 1}},
	} {
		h.Note("the runner's %s fails", c.point)
		id := "task-" + c.point
		// Step 1 of this task has a checkpoint at step 1 already.
		p0 := w.newProc("process 0 of "+id, 1, map[string]action{"commit/0": crashAfter})
		if c.point == "load" {
			if err := p0.run(id, p0.steps(id, drawSteps), crashed); err != nil {
				t.Fatal(err)
			}
		}
		p := w.newProc("process 1 of "+id, 2, map[string]action{c.point: failBefore})
		err := p.run(id, p.steps(id, drawSteps), returned)
		if !errors.Is(err, c.want) {
			t.Fatalf("Run(%s) with its %s failing = %v, want an error wrapping %v", id, c.point, err, c.want)
		}
		if got := w.runsBy(p.name, id); !slices.Equal(got, c.steps) {
			t.Fatalf("with its %s failing, the runner computed steps %v, want %v: it must stop at the failure (and never start again from step 0)", c.point, got, c.steps)
		}
		_, _, _, applies := p.counts()
		for _, a := range applies {
			if a.step >= 1 && c.point != "commit/0" {
				t.Fatalf("with its %s failing, the runner applied step %d's effect, want it stopped", c.point, a.step)
			}
			if c.point == "commit/0" && a.step > 0 {
				t.Fatalf("with step 0's checkpoint failing, the runner went on to apply step %d, want it stopped", a.step)
			}
		}
		q := w.newProc("process 2 of "+id, 3, nil)
		q.mustFinish(id, q.steps(id, drawSteps))
		w.mustBeDone(id, 3, 3, "after a new runner resumed")
	}
}

func checkProgress(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	p := w.newProc("process 1", 1, map[string]action{"commit/0": crashAfter})
	if got := p.runner.Progress(); got != (task.RunProgress{}) {
		t.Fatalf("Progress() before Run = %+v, want the zero Progress", got)
	}
	if err := p.run("task-1", p.steps("task-1", drawSteps), crashed); err != nil {
		t.Fatal(err)
	}
	q := w.newProc("process 2", 2, map[string]action{"apply/2": pauseBefore})
	if err := q.run("task-1", q.steps("task-1", drawSteps), paused); err != nil {
		t.Fatal(err)
	}
	var got task.RunProgress
	c := suites.Go(func() { suites.Guard(t, func() { got = q.runner.Progress() }) })
	if !c.Settle() {
		t.Fatal("Progress() while step 2's effect is in progress did not answer: it must not wait for the step")
	}
	<-c.Done()
	h.Record("operator", "Progress()", got.String())
	if want := (task.RunProgress{TaskID: "task-1", Total: 3, Completed: 2, ResumedFrom: 1, Running: true}); got != want {
		t.Fatalf("Progress() during step 2 = %+v, want %+v", got, want)
	}
	q.wake()
	if err := q.await(returned); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	got = q.runner.Progress()
	h.Record("operator", "Progress()", got.String())
	if want := (task.RunProgress{TaskID: "task-1", Total: 3, Completed: 3, ResumedFrom: 1}); got != want {
		t.Fatalf("Progress() after Run = %+v, want %+v", got, want)
	}

	h.Note("a resumed run, during the first step it runs")
	p5 := w.newProc("process 5", 1, map[string]action{"commit/0": crashAfter})
	if err := p5.run("task-3", p5.steps("task-3", plainSteps), crashed); err != nil {
		t.Fatal(err)
	}
	p6 := w.newProc("process 6", 2, map[string]action{"apply/1": pauseBefore})
	if err := p6.run("task-3", p6.steps("task-3", plainSteps), paused); err != nil {
		t.Fatal(err)
	}
	got = p6.runner.Progress()
	h.Record("operator", "Progress()", got.String())
	if want := (task.RunProgress{TaskID: "task-3", Total: 3, Completed: 1, ResumedFrom: 1, Running: true}); got != want {
		t.Fatalf("Progress() during step 1, the first step of a run resumed from step 1 = %+v, want %+v: the steps done before the resume count as completed", got, want)
	}
	p6.wake()
	if err := p6.await(returned); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}

	h.Note("a run that stops at a failure")
	r := w.newProc("process 3", 1, map[string]action{"apply/1": failBefore})
	_ = r.run("task-2", r.steps("task-2", plainSteps), returned)
	got = r.runner.Progress()
	h.Record("operator", "Progress()", got.String())
	if want := (task.RunProgress{TaskID: "task-2", Total: 3, Completed: 1}); got != want {
		t.Fatalf("Progress() after Run stopped at step 1's failed effect = %+v, want %+v", got, want)
	}
}

func checkCancel(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	h.Note("a context done before Run")
	p := w.newProc("process 1", 1, nil)
	p.cancel()
	err := p.run("task-1", p.steps("task-1", drawSteps), returned)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	if loads, commits, eff, applies := p.counts(); commits != 0 || eff != 0 || len(applies) != 0 {
		t.Fatalf("Run with a cancelled context loaded %d, committed %d, computed %d and applied %d, want nothing", loads, commits, eff, len(applies))
	}
	h.Note("a context done before Run, with zero steps")
	pz := w.newProc("process 0", 1, nil)
	pz.cancel()
	if err := pz.run("task-empty", nil, returned); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run with a cancelled context and zero steps = %v, want an error wrapping context.Canceled: the context is checked before anything else, even when there is nothing to do", err)
	}
	h.Note("a context done before Run, with no task ID")
	pn := w.newProc("process 00", 1, nil)
	pn.cancel()
	if err := pn.run("", pn.steps("", plainSteps), returned); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run(\"\") with a cancelled context = %v, want an error wrapping context.Canceled: the context is checked before anything else, the task ID included", err)
	}

	for _, c := range []struct {
		point string
		a     action
		next  int // the checkpoint's Next when Run returns
		steps []int
	}{
		{"effect/1", cancelAfter, 1, []int{0, 1}},
		{"apply/1", cancelAfter, 2, []int{0, 1}},
		{"commit/1", cancelAfter, 2, []int{0, 1}},
		{"apply/2", cancelAfter, 3, []int{0, 1, 2}},
	} {
		h.Note("cancelled %s", c.point)
		id := "task-" + c.point
		p := w.newProc("process of "+id, 1, map[string]action{c.point: c.a})
		err := p.run(id, p.steps(id, drawSteps), returned)
		if c.next < 3 && !errors.Is(err, context.Canceled) {
			t.Fatalf("Run(%s) cancelled %s = %v, want an error wrapping context.Canceled", id, c.point, err)
		}
		if c.next == 3 && err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Run(%s) cancelled while its last effect succeeded = %v, want nil or an error wrapping context.Canceled", id, err)
		}
		if cp, _ := w.kv.peek(id); cp.Next != c.next {
			t.Fatalf("Run(%s) cancelled %s left the checkpoint at %s, want step %d: an effect that succeeded is checkpointed, nothing after it runs", id, c.point, cp, c.next)
		}
		if got := w.runsBy(p.name, id); !slices.Equal(got, c.steps) {
			t.Fatalf("Run(%s) cancelled %s computed steps %v, want %v", id, c.point, got, c.steps)
		}
	}

	// Twice: step 1 of drawSteps draws values, so a runner that misses the
	// deadline is stopped anyway by the commit of its values; step 1 of
	// plainSteps draws none, so only the runner's own check stops it.
	for i, c := range []struct {
		id    string
		steps spec
	}{{"task-deadline", drawSteps}, {"task-deadline-plain", plainSteps}} {
		h.Note("a deadline that passes on virtual time while step 1 of %s computes", c.id)
		q := w.newProc(fmt.Sprintf("process %d", 9+i), 1, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		q.ctx = ctx
		steps := q.steps(c.id, c.steps)
		slow := steps[1].Effect
		steps[1].Effect = func(rec task.Recorder) (string, error) {
			time.Sleep(31 * time.Second)
			return slow(rec)
		}
		q.start(c.id, steps)
		<-q.call.Done() // the step sleeps on virtual time: wait for it, not Settle
		if err := q.result(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run(%s) with a deadline passing during step 1 = %v, want an error wrapping context.DeadlineExceeded", c.id, err)
		}
		if cp, _ := w.kv.peek(c.id); cp.Next != 1 {
			t.Fatalf("after the deadline passed during step 1 of %s, the checkpoint is %s, want step 1", c.id, cp)
		}
		if _, _, _, applies := q.counts(); len(applies) != 1 {
			t.Fatalf("after the deadline passed during step 1 of %s, %d effects were attempted, want 1 (step 0 only): a deadline that passed is a cancellation, checked before the effect", c.id, len(applies))
		}
	}
}

func checkConcurrentRunners(t *testing.T, h *suites.History, e *target) {
	w := e.newWorld()
	// The steps draw no values: two live runners drawing values for one
	// step at once is the case fencing alone does not cover (the chapter's
	// "What fencing does not cover"); here the race is over the checkpoint.
	five := spec{{}, {}, {}, {}, {}}
	p0 := w.newProc("process 0", 1, map[string]action{"commit/1": crashAfter})
	if err := p0.run("task-1", p0.steps("task-1", five), crashed); err != nil {
		t.Fatal(err)
	}
	var procs []*proc
	for i := range 4 {
		procs = append(procs, w.newProc(fmt.Sprintf("process %d", i+1), task.FencingToken(i+1), nil))
	}
	for _, p := range procs {
		p.start("task-1", p.steps("task-1", five))
	}
	var readers sync.WaitGroup
	for _, p := range procs {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for range 50 {
				suites.Guard(t, func() { _ = p.runner.Progress() })
				runtimeGosched()
			}
		}()
	}
	readers.Wait()
	for _, p := range procs {
		if s := p.settle(); s != returned {
			t.Fatalf("%s is %s, want returned", p.name, s)
		}
	}
	for _, p := range procs {
		if err := p.result(); err != nil && !errors.Is(err, task.ErrStaleToken) {
			t.Fatalf("%s's Run = %v, want nil or an error wrapping ErrStaleToken", p.name, err)
		}
		if pr := p.runner.Progress(); pr.Running {
			t.Fatalf("%s's Progress() after Run returned = %+v, want Running false", p.name, pr)
		}
	}
	w.mustBeDone("task-1", 5, 0, "after four runners raced")
	w.mustNotMoveBack("task-1")
}
