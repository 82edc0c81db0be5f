package enginesuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// checkSubmitIdempotent: the job's ID is its idempotency key, in every
// state of the job; other contents under the same ID are a conflict; an
// invalid job is refused and leaves nothing behind.
func checkSubmitIdempotent(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second})
	c := st.proc("client")
	if _, err := c.inspect("job-1"); !errors.Is(err, task.ErrUnknownJob) {
		w.Errorf("Inspect(job-1) before any submission = %v, want ErrUnknownJob", err)
	}
	j := job("job-1", 2)
	c.mustSubmit(j)
	in := c.mustInspect("job-1")
	want := task.JobInfo{Job: j, State: task.JobQueued, Until: at(0)}
	if diff := cmp.Diff(want, in); diff != "" {
		w.Errorf("Inspect(job-1) after Submit (-want +got):\n%s", diff)
	}
	for _, stage := range []string{"queued", "leased", "done"} {
		switch stage {
		case "leased":
			c.mustLease()
		case "done":
			l, _ := c.lease()
			w.advance(10 * time.Second)
			l = c.mustLease()
			if err := c.complete(l); err != nil {
				w.Fatalf("Complete = %v", err)
			}
		}
		before := c.mustInspect("job-1")
		if ok, err := c.submit(job("job-1", 2)); ok || err != nil {
			w.Errorf("Submit(job-1) again while %s = %v, %v, want false, <nil> (the same job)", stage, ok, err)
		}
		if after := c.mustInspect("job-1"); !cmp.Equal(before, after) {
			w.Errorf("a duplicate Submit while %s changed the job:\n%s", stage, cmp.Diff(before, after))
		}
	}
	// Fields whose text runs on into the next one: the same characters in
	// the same order, split elsewhere, are other contents.
	shiftedAccount := []task.Step{j.Steps[0], j.Steps[1]}
	shiftedAccount[0].DocumentID = "t" + shiftedAccount[0].DocumentID
	shiftedStep := []task.Step{j.Steps[0], j.Steps[1]}
	shiftedStep[0].DocumentID += shiftedStep[0].Recipient[:1]
	shiftedStep[0].Recipient = shiftedStep[0].Recipient[1:]
	for _, other := range []task.Job{job("job-1", 3), {ID: "job-1", Account: "other", Steps: j.Steps},
		{ID: "job-1", Account: "acct", Steps: []task.Step{j.Steps[1], j.Steps[0]}},
		{ID: "job-1", Account: "acc", Steps: shiftedAccount}, {ID: "job-1", Account: "acct", Steps: shiftedStep}} {
		if ok, err := c.submit(other); ok || !errors.Is(err, task.ErrConflict) {
			w.Errorf("Submit(job-1 with other contents %+v) = %v, %v, want false, ErrConflict", other, ok, err)
		}
	}
	for _, bad := range []task.Job{{ID: "", Account: "acct", Steps: j.Steps}, {ID: "empty", Account: "acct"}} {
		if ok, err := c.submit(bad); ok || !errors.Is(err, task.ErrInvalidJob) {
			w.Errorf("Submit(%+v) = %v, %v, want false, ErrInvalidJob", bad, ok, err)
		}
	}
	if _, err := c.inspect("empty"); !errors.Is(err, task.ErrUnknownJob) {
		w.Errorf("Inspect(empty) after its Submit was refused = %v, want ErrUnknownJob", err)
	}
	c.expectNoJob("after the only job was done and the refused submissions")

	w.h.Note("a job whose strings hold bytes that are not UTF-8 comes back byte for byte")
	bin := task.Job{ID: "bin-\xff\x00", Account: "acct-\xfe", Steps: []task.Step{{DocumentID: "doc-\xff", Recipient: "r@example.com", Subject: "s-\xc3"}}}
	c.mustSubmit(bin)
	if in := c.mustInspect(bin.ID); !cmp.Equal(in.Job, bin) {
		w.Errorf("Inspect(%q).Job = %+q, want %+q: the job comes back exactly as submitted, whatever its bytes", bin.ID, in.Job, bin)
	}
	if l := c.mustLease(); !cmp.Equal(l.Job, bin) {
		w.Errorf("Lease().Job = %+q, want %+q: the job comes exactly as submitted, whatever its bytes", l.Job, bin)
	}
	other := bin
	other.Steps = []task.Step{{DocumentID: "doc-\xfe", Recipient: "r@example.com", Subject: "s-\xc3"}}
	if ok, err := c.submit(other); ok || !errors.Is(err, task.ErrConflict) {
		w.Errorf("Submit(%q) again with a document ID that differs in one byte that is not UTF-8 = %v, %v, want false, ErrConflict", bin.ID, ok, err)
	}
}

// checkBounded: at most Capacity unfinished jobs; a rejected submission
// stores nothing, so the same ID is accepted once there is room; finished
// jobs free their room; a duplicate is answered even when full.
func checkBounded(w *world) {
	st := w.newStore(Options{Capacity: 3, VisibilityTimeout: 10 * time.Second})
	c := st.proc("client")
	c.mustSubmit(job("job-1", 1))
	for n := range 3 {
		if ok, err := c.submit(job("job-1", 1)); ok || err != nil {
			w.Errorf("Submit(job-1) again (duplicate %d) with 1 of 3 unfinished = %v, %v, want false, <nil>", n+1, ok, err)
		}
	}
	for i := 2; i <= 3; i++ {
		if ok, err := c.submit(job(fmt.Sprintf("job-%d", i), 1)); !ok || err != nil {
			w.Fatalf("Submit(job-%d) with %d of 3 unfinished, after 3 duplicates of job-1 = %v, %v, want true, <nil>: a duplicate takes no room", i, i-1, ok, err)
		}
	}
	if ok, err := c.submit(job("job-4", 1)); ok || !errors.Is(err, task.ErrFull) {
		w.Errorf("Submit(job-4) with 3 of 3 unfinished = %v, %v, want false, ErrFull", ok, err)
	}
	if _, err := c.inspect("job-4"); !errors.Is(err, task.ErrUnknownJob) {
		w.Errorf("Inspect(job-4) after ErrFull = %v, want ErrUnknownJob: a rejected submission stores nothing", err)
	}
	if ok, err := c.submit(job("job-1", 1)); ok || err != nil {
		w.Errorf("Submit(job-1) again while full = %v, %v, want false, <nil>: a duplicate takes no room", ok, err)
	}
	l := c.mustLease()
	if ok, err := c.submit(job("job-4", 1)); !errors.Is(err, task.ErrFull) {
		w.Errorf("Submit(job-4) with 3 unfinished, one of them leased = %v, %v, want ErrFull: a leased job is unfinished", ok, err)
	}
	if err := c.complete(l); err != nil {
		w.Fatalf("Complete = %v", err)
	}
	c.mustSubmit(job("job-4", 1))
	l = c.mustLease()
	if err := c.fail(l, fmt.Errorf("%w: bad recipient", task.ErrPermanent)); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	c.mustSubmit(job("job-5", 1))
	if ok, err := c.submit(job("job-6", 1)); ok || !errors.Is(err, task.ErrFull) {
		w.Errorf("Submit(job-6) with 3 of 3 unfinished = %v, %v, want false, ErrFull", ok, err)
	}

	w.h.Note("a job dead-lettered by a Lease (its last lease ended) frees its room too")
	st = w.newStore(Options{Capacity: 1, MaxDeliveries: 1, VisibilityTimeout: 10 * time.Second})
	c = st.proc("client")
	c.mustSubmit(job("crasher", 1))
	c.mustLease()
	w.advance(10 * time.Second)
	c.expectNoJob("after the only delivery of the only job ended without an outcome")
	if ok, err := c.submit(job("next", 1)); !ok || err != nil {
		w.Errorf("Submit(next) after the only job was dead-lettered by Lease = %v, %v, want true, <nil>: a dead job takes no room", ok, err)
	}

	w.h.Note("Capacity 0 means the default, %d", task.DefaultCapacity)
	st = w.newStore(Options{})
	c = st.proc("client")
	for i := range task.DefaultCapacity {
		j := job(fmt.Sprintf("d-%d", i), 1)
		if ok, err := c.b.Submit(context.Background(), j); !ok || err != nil {
			w.Fatalf("with Capacity 0: Submit(%s), the %d-th job = %v, %v, want true, <nil>", j.ID, i+1, ok, err)
		}
	}
	if ok, err := c.submit(job("d-overflow", 1)); ok || !errors.Is(err, task.ErrFull) {
		w.Errorf("with Capacity 0: Submit of job %d = %v, %v, want false, ErrFull", task.DefaultCapacity+1, ok, err)
	}
}

// checkLeaseVisibility: a leased job is invisible until its lease ends,
// exactly at Expires; the earliest visible job goes first.
func checkLeaseVisibility(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second})
	a, b := st.proc("worker A"), st.proc("worker B")
	a.expectNoJob("on an empty backend")
	mine := job("job-1", 2)
	a.mustSubmit(mine)
	mine.Steps[0].Subject = "edited by the client after Submit" // the caller's slice stays the caller's
	w.advance(time.Millisecond)
	a.mustSubmit(job("job-2", 1))
	l := a.mustLease()
	if l.Job.ID != "job-1" {
		w.Errorf("first Lease() got %s, want job-1: it became visible first", l.Job.ID)
	}
	w.advance(time.Millisecond)
	if !cmp.Equal(l.Job, job("job-1", 2)) {
		w.Errorf("Lease().Job = %+v, want the job as submitted (the client edited its own slice after Submit)", l.Job)
	}
	l.Job.Steps[1].Subject = "edited by the worker" // the lease's job is the worker's copy
	peek := a.mustInspect("job-1")
	if !cmp.Equal(peek.Job, job("job-1", 2)) {
		w.Errorf("after the worker edited its lease's Job.Steps: Inspect(job-1).Job = %+v, want the job as submitted: Lease must return a copy", peek.Job)
	}
	peek.Job.Steps[0].Recipient = "edited by the inspector"
	if again := a.mustInspect("job-1"); !cmp.Equal(again.Job, job("job-1", 2)) {
		w.Errorf("after a caller edited what Inspect returned: Inspect(job-1).Job = %+v, want the job as submitted: Inspect must return a copy", again.Job)
	}
	if l.Worker != "worker A" || l.Delivery != 1 || l.Step != 0 || !l.Expires.Equal(at(10*time.Second+time.Millisecond)) {
		w.Errorf("Lease() = %+v, want Worker \"worker A\", Delivery 1, Step 0, Expires +10.001s", l)
	}
	if in := a.mustInspect("job-1"); in.State != task.JobLeased || in.Deliveries != 1 || in.Token != l.Token || !in.Until.Equal(l.Expires) {
		w.Errorf("Inspect(job-1) while leased = %s until %v, want leased, 1 delivery, token %d, until the lease's Expires", in, in.Until, l.Token)
	}
	l2 := b.mustLease()
	if l2.Job.ID != "job-2" {
		w.Errorf("second Lease() got %s, want job-2 (job-1 is leased)", l2.Job.ID)
	}
	b.expectNoJob("with both jobs leased")
	w.advance(10*time.Second - 2*time.Millisecond)
	b.expectNoJob("1 ms before job-1's lease ends")
	w.advance(time.Millisecond)
	again, err := b.lease()
	if err != nil || again.Job.ID != "job-1" || again.Delivery != 2 || again.Worker != "worker B" {
		w.Errorf("Lease() at job-1's Expires = %s, want job-1 to worker B, delivery 2: the lease holds only while the clock is before Expires", describeLease(again, err))
	}

	w.h.Note("the job visible first goes first, whatever the order of submission")
	st = w.newStore(Options{VisibilityTimeout: 10 * time.Second, BaseBackoff: time.Second})
	c := st.proc("worker C")
	for i := 1; i <= 4; i++ {
		c.mustSubmit(job(fmt.Sprintf("early-%d", i), 1))
	}
	w.advance(time.Millisecond)
	c.mustSubmit(job("late", 1))
	for range 4 {
		c.mustLease() // early-1 to early-4: their leases end at +10s
	}
	late := c.mustLease()
	if err := c.fail(late, errors.New("flaky")); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	w.advance(20 * time.Second)
	if l := c.mustLease(); l.Job.ID != "late" {
		w.Errorf("Lease() = %s, want late: visible again since +1s, before the other four (since +10s), though submitted after them", l)
	}

	w.h.Note("VisibilityTimeout 0 means the default, %v", task.DefaultJobVisibility)
	st = w.newStore(Options{})
	c = st.proc("worker D")
	c.mustSubmit(job("job-d", 1))
	start := w.clock.Now()
	if l := c.mustLease(); !l.Expires.Equal(start.Add(task.DefaultJobVisibility)) {
		w.Errorf("with VisibilityTimeout 0: Lease().Expires = +%v after the lease, want %v", l.Expires.Sub(start), task.DefaultJobVisibility)
	}
	w.advance(task.DefaultJobVisibility - time.Millisecond)
	c.expectNoJob("1 ms before the default visibility timeout ends")
	w.advance(time.Millisecond)
	if _, err := c.lease(); err != nil {
		w.Errorf("Lease() when the default visibility timeout ended = %v, want the job again", err)
	}
}

// checkTokens: every lease counts a delivery and carries a token greater
// than every token before, for any job, in any process.
func checkTokens(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second, MaxDeliveries: 20})
	p := st.proc("worker 1")
	p.mustSubmit(job("job-1", 1))
	p.mustSubmit(job("job-2", 1))
	var last task.Token
	seen := 0
	check := func(l task.JobLease, wantDelivery int) {
		w.t.Helper()
		if l.Token <= last {
			w.Errorf("%s: token %d is not greater than the token %d granted before it", l, l.Token, last)
		}
		if l.Delivery != wantDelivery {
			w.Errorf("%s: Delivery %d, want %d: each lease counts one delivery", l, l.Delivery, wantDelivery)
		}
		last = l.Token
		seen++
	}
	for round := 1; round <= 4; round++ {
		check(p.mustLease(), round)
		check(p.mustLease(), round)
		w.advance(10 * time.Second)
		if round == 2 {
			p = st.proc("worker 2") // a new process continues the sequence
		}
	}
	l := p.mustLease()
	check(l, 5)
	if err := p.fail(l, errors.New("flaky")); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	w.advance(time.Minute)
	check(p.mustLease(), 5) // job-2's fifth delivery
	check(p.mustLease(), 6) // job-1 after its failure
}

// checkFencing: only the job's current lease, holding at the call's
// instant, checkpoints, completes or fails it; a zombie changes nothing.
func checkFencing(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second})
	a, b := st.proc("worker A"), st.proc("worker B")
	a.mustSubmit(job("job-1", 3))
	la := a.mustLease()
	if _, err := a.checkpoint(la, 1); err != nil {
		w.Fatalf("Checkpoint by the current lease = %v, want <nil>", err)
	}
	w.h.Note("worker A stalls; its lease (renewed by the checkpoint) ends")
	w.advance(10 * time.Second)
	expired := a.mustInspect("job-1")
	zombie := func(who string, l task.JobLease, want string) {
		w.t.Helper()
		before := a.mustInspect("job-1")
		if _, err := a.checkpoint(l, 0); !errors.Is(err, task.ErrLeaseLost) {
			w.Errorf("%s: Checkpoint(step 0) = %v, want ErrLeaseLost", who, err)
		}
		if err := a.fail(l, errors.New("late failure")); !errors.Is(err, task.ErrLeaseLost) {
			w.Errorf("%s: Fail = %v, want ErrLeaseLost", who, err)
		}
		if err := a.complete(l); !errors.Is(err, task.ErrLeaseLost) {
			w.Errorf("%s: Complete = %v, want ErrLeaseLost", who, err)
		}
		if after := a.mustInspect("job-1"); !cmp.Equal(before, after) {
			w.Errorf("%s: the refused calls changed the job (%s):\n%s", who, want, cmp.Diff(before, after))
		}
	}
	la.Step = 1
	zombie("worker A at its lease's Expires, nobody else has leased the job", la, "an expired lease is lost even before the job is leased again")
	if !cmp.Equal(expired, a.mustInspect("job-1")) {
		w.Errorf("the job changed after its lease expired")
	}
	lb := b.mustLease()
	if lb.Step != 1 {
		w.Errorf("worker B's lease has Step %d, want 1 (A's checkpoint)", lb.Step)
	}
	zombie("worker A, after worker B leased the job with a greater token", la, "B's lease is the current one")
	forged := lb
	forged.Token = lb.Token + 1
	zombie("a token greater than the current one", forged, "only the current token is accepted")
	if _, err := b.checkpoint(lb, 2); err != nil {
		w.Errorf("worker B's Checkpoint = %v, want <nil>", err)
	}
	w.advance(10*time.Second - time.Millisecond)
	if err := b.complete(lb); err != nil {
		w.Errorf("worker B's Complete 1 ms before its renewed lease ends = %v, want <nil>", err)
	}
	if in := b.mustInspect("job-1"); in.State != task.JobDone || in.Step != 2 {
		w.Errorf("after B completed: %s, want done at step 2", in)
	}
	if err := b.complete(lb); !errors.Is(err, task.ErrLeaseLost) {
		w.Errorf("a second Complete of the same lease = %v, want ErrLeaseLost: Complete ended the lease", err)
	}
	if err := b.fail(lb, errors.New("late")); !errors.Is(err, task.ErrLeaseLost) {
		w.Errorf("Fail after Complete = %v, want ErrLeaseLost", err)
	}
	if in := b.mustInspect("job-1"); in.State != task.JobDone || in.LastError != "" {
		w.Errorf("after the refused calls: %s, want still done, no last error", in)
	}

	w.h.Note("a lease ended by Fail: the job waits out its backoff with the same latest token")
	b.mustSubmit(job("job-2", 2))
	failed := b.mustLease()
	if err := b.fail(failed, errors.New("flaky")); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	before := b.mustInspect("job-2")
	if _, err := b.checkpoint(failed, 1); !errors.Is(err, task.ErrLeaseLost) {
		w.Errorf("Checkpoint after the lease's own Fail = %v, want ErrLeaseLost: Fail ended the lease", err)
	}
	if err := b.complete(failed); !errors.Is(err, task.ErrLeaseLost) {
		w.Errorf("Complete after the lease's own Fail = %v, want ErrLeaseLost: Fail ended the lease", err)
	}
	if err := b.fail(failed, errors.New("again")); !errors.Is(err, task.ErrLeaseLost) {
		w.Errorf("a second Fail of the same lease = %v, want ErrLeaseLost", err)
	}
	if after := b.mustInspect("job-2"); !cmp.Equal(before, after) {
		w.Errorf("calls with a lease ended by Fail changed the job:\n%s", cmp.Diff(before, after))
	}
}

// checkCheckpoint: a checkpoint records the step and renews the lease from
// now; the next lease resumes from it.
func checkCheckpoint(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second})
	a, b := st.proc("worker A"), st.proc("worker B")
	a.mustSubmit(job("job-1", 3))
	l := a.mustLease()
	w.advance(6 * time.Second)
	nl, err := a.checkpoint(l, 1)
	if err != nil {
		w.Fatalf("Checkpoint = %v", err)
	}
	if nl.Step != 1 || !nl.Expires.Equal(at(16*time.Second)) || nl.Token != l.Token || nl.Job.ID != "job-1" {
		w.Errorf("Checkpoint(step 1) at +6s = %s, expires +%v, want step 1, the same token, expires +16s (now + the visibility timeout)", nl, nl.Expires.Sub(at(0)))
	}
	if in := a.mustInspect("job-1"); in.Step != 1 || !in.Until.Equal(at(16*time.Second)) {
		w.Errorf("Inspect after the checkpoint = %s until +%v, want step 1 until +16s", in, in.Until.Sub(at(0)))
	}
	w.advance(6 * time.Second)
	b.expectNoJob("at +12s, after the first lease would have ended but the checkpoint renewed it")
	if nl, err = a.checkpoint(nl, 2); err != nil {
		w.Fatalf("second Checkpoint = %v", err)
	}
	w.advance(10*time.Second - time.Millisecond)
	b.expectNoJob("1 ms before the renewed lease ends")
	w.advance(time.Millisecond)
	lb, err := b.lease()
	if err != nil || lb.Step != 2 || lb.Delivery != 2 {
		w.Errorf("Lease() after A's lease ended = %s, want job-1 at step 2, delivery 2: the next delivery resumes at the checkpoint", describeLease(lb, err))
	}
}

// checkBackoff: a failure makes the job visible again after
// min(MaxBackoff, BaseBackoff*2^(n-1)), exactly, and keeps its cause.
func checkBackoff(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second, MaxDeliveries: 10, BaseBackoff: time.Second, MaxBackoff: 5 * time.Second})
	p := st.proc("worker")
	p.mustSubmit(job("job-1", 1))
	for n, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		l := p.mustLease()
		w.advance(3 * time.Second)
		cause := fmt.Errorf("timeout %d", n+1)
		if err := p.fail(l, cause); err != nil {
			w.Fatalf("Fail = %v", err)
		}
		in := p.mustInspect("job-1")
		now := w.clock.Now()
		if in.State != task.JobQueued || !in.Until.Equal(now.Add(want)) || in.LastError != cause.Error() {
			w.Errorf("after delivery %d failed: %s visible at +%v after the failure, want queued, visible %v after it (min(MaxBackoff 5s, 1s*2^%d)), last error %q",
				n+1, in, in.Until.Sub(now), want, n, cause)
		}
		w.advance(want - time.Millisecond)
		p.expectNoJob(fmt.Sprintf("1 ms before the backoff of delivery %d ends", n+1))
		w.advance(time.Millisecond)
	}

	w.h.Note("job-3: its first delivery's worker crashes (the lease ends unreported), its second fails: n is the delivery, 2, not the number of failures")
	st = w.newStore(Options{VisibilityTimeout: 10 * time.Second, MaxDeliveries: 10, BaseBackoff: time.Second, MaxBackoff: 5 * time.Second})
	p = st.proc("worker")
	p.mustSubmit(job("job-3", 1))
	if l := p.mustLease(); l.Job.ID != "job-3" {
		w.Fatalf("Lease() = %s, want job-3", l)
	}
	w.advance(10 * time.Second) // the crashed worker's lease ends
	l3 := p.mustLease()
	if l3.Job.ID != "job-3" || l3.Delivery != 2 {
		w.Fatalf("Lease() once the first lease ended = %s, want job-3, delivery 2", l3)
	}
	if err := p.fail(l3, errors.New("timeout after a crash")); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	if in, now := p.mustInspect("job-3"), w.clock.Now(); in.State != task.JobQueued || !in.Until.Equal(now.Add(2*time.Second)) {
		w.Errorf("after delivery 2 failed (delivery 1 crashed): %s visible at +%v, want queued, visible 2s after the failure (1s*2^(2-1)): a crashed delivery is a delivery, and n counts deliveries, not failures", in, in.Until.Sub(now))
	}

	w.h.Note("zero options: BaseBackoff %v, MaxBackoff %v; and a delivery count far past the cap", task.DefaultBaseBackoff, task.DefaultMaxBackoff)
	st = w.newStore(Options{MaxDeliveries: 45})
	p = st.proc("worker")
	p.mustSubmit(job("job-2", 1))
	for n := 1; n <= 40; n++ {
		l, err := p.b.Lease(context.Background(), "worker")
		if err != nil {
			w.Fatalf("Lease() for delivery %d = %v", n, err)
		}
		if err := p.b.Fail(context.Background(), l, errors.New("again")); err != nil {
			w.Fatalf("Fail of delivery %d = %v", n, err)
		}
		in, _ := p.b.Inspect(context.Background(), "job-2")
		want := task.DefaultMaxBackoff
		if n <= 9 {
			want = task.DefaultBaseBackoff << (n - 1)
		}
		if got := in.Until.Sub(w.clock.Now()); got != want {
			w.Fatalf("with the default backoff, after delivery %d failed the job is visible %v later, want %v", n, got, want)
		}
		w.clock.mu.Lock()
		w.clock.now = in.Until
		w.clock.mu.Unlock()
	}
}

// checkDeliveryCount: the count is kept by the lease, so a job whose
// workers all crash (and never report) is dead-lettered after
// MaxDeliveries, with the last error anyone reported, and never delivered
// again.
func checkDeliveryCount(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second, MaxDeliveries: 3})
	p := st.proc("worker")
	p.mustSubmit(job("poison", 1))
	w.advance(time.Millisecond)
	p.mustSubmit(job("crashes", 1))
	l := p.mustLease() // poison, delivery 1: reports a failure
	if err := p.fail(l, errors.New("parser panicked")); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	for range 3 {
		w.advance(10 * time.Second)
		for {
			if _, err := p.lease(); err != nil {
				break
			}
		}
		w.h.Note("every worker that leased a job crashed without a word")
	}
	w.advance(10 * time.Second)
	w.advance(time.Millisecond)
	p.mustSubmit(job("after", 1))
	if l, err := p.lease(); err != nil || l.Job.ID != "after" {
		w.Errorf("Lease() after each job's third delivery ended without an outcome, with a job submitted since = %s, want after: the Lease that dead-letters the two goes on to the next visible job", describeLease(l, err))
	} else if err := p.complete(l); err != nil {
		w.Fatalf("Complete(after) = %v", err)
	}
	p.expectNoJob("after each job's third delivery ended without an outcome")
	for _, c := range []struct{ id, lastErr string }{{"poison", "parser panicked"}, {"crashes", ""}} {
		in := p.mustInspect(c.id)
		if in.State != task.JobDead || in.Reason != task.ReasonMaxDeliveries || in.Deliveries != 3 || in.LastError != c.lastErr {
			w.Errorf("Inspect(%s) = %s, want dead, reason %q, 3 deliveries, last error %q: deliveries are counted when they happen, not when a failure is reported",
				c.id, in, task.ReasonMaxDeliveries, c.lastErr)
		}
	}
	w.advance(30 * 24 * time.Hour)
	p.expectNoJob("30 days later: a dead job is never delivered again")

	w.h.Note("MaxDeliveries 0 means the default, %d", task.DefaultJobMaxDeliveries)
	st = w.newStore(Options{VisibilityTimeout: 10 * time.Second})
	p = st.proc("worker")
	p.mustSubmit(job("job-d", 1))
	for n := 1; n <= task.DefaultJobMaxDeliveries; n++ {
		if l, err := p.lease(); err != nil || l.Delivery != n {
			w.Fatalf("with MaxDeliveries 0: delivery %d: Lease() = %s", n, describeLease(l, err))
		}
		w.advance(10 * time.Second)
	}
	p.expectNoJob(fmt.Sprintf("after the default %d deliveries", task.DefaultJobMaxDeliveries))
	if in := p.mustInspect("job-d"); in.State != task.JobDead {
		w.Errorf("with MaxDeliveries 0: %s, want dead after %d deliveries", in, task.DefaultJobMaxDeliveries)
	}
}

// checkDeadLetterOnFail: a failure of the last allowed delivery, or a
// permanent one, dead-letters the job at once, with its reason and cause.
func checkDeadLetterOnFail(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second, MaxDeliveries: 2})
	p := st.proc("worker")
	p.mustSubmit(job("flaky", 1))
	l := p.mustLease()
	if err := p.fail(l, errors.New("timeout 1")); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	if in := p.mustInspect("flaky"); in.State != task.JobQueued {
		w.Errorf("after delivery 1 of 2 failed: %s, want queued", in)
	}
	w.advance(time.Second)
	l = p.mustLease()
	if err := p.fail(l, errors.New("timeout 2")); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	if in := p.mustInspect("flaky"); in.State != task.JobDead || in.Reason != task.ReasonMaxDeliveries || in.LastError != "timeout 2" || in.Deliveries != 2 || !in.Until.IsZero() {
		w.Errorf("at once after delivery 2 of 2 failed: %s, want dead, reason %q, last error \"timeout 2\", 2 deliveries", in, task.ReasonMaxDeliveries)
	}
	p.mustSubmit(job("refused", 1))
	l = p.mustLease()
	if l.Job.ID != "refused" {
		w.Fatalf("Lease() = %s, want refused: flaky is dead", l)
	}
	cause := fmt.Errorf("step 0: %w: provider: invalid request: recipient is not an email address", task.ErrPermanent)
	if err := p.fail(l, cause); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	if in := p.mustInspect("refused"); in.State != task.JobDead || in.Reason != task.ReasonPermanent || in.LastError != cause.Error() || in.Deliveries != 1 {
		w.Errorf("after its first delivery failed permanently: %s, want dead, reason %q, last error %q, 1 delivery", in, task.ReasonPermanent, cause)
	}
	w.h.Note("a permanent failure of the last allowed delivery: the reason is still the permanent failure")
	p.mustSubmit(job("late-refusal", 1))
	l = p.mustLease()
	if err := p.fail(l, errors.New("timeout 1")); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	w.advance(time.Second)
	if l = p.mustLease(); l.Job.ID != "late-refusal" || l.Delivery != 2 {
		w.Fatalf("Lease() = %s, want late-refusal, delivery 2", l)
	}
	if err := p.fail(l, cause); err != nil {
		w.Fatalf("Fail = %v", err)
	}
	if in := p.mustInspect("late-refusal"); in.State != task.JobDead || in.Reason != task.ReasonPermanent || in.LastError != cause.Error() {
		w.Errorf("after its last allowed delivery (2 of 2) failed permanently: %s, want dead, reason %q (a permanent failure is permanent on any delivery), last error %q", in, task.ReasonPermanent, cause)
	}
	w.advance(30 * 24 * time.Hour)
	p.expectNoJob("30 days later, with three dead jobs")
	p.mustSubmit(job("fine", 1))
	if l := p.mustLease(); l.Job.ID != "fine" {
		w.Errorf("Lease() = %s, want fine: the dead jobs are never delivered again", l)
	}
}

// checkOptions: negative options and a visibility timeout over the maximum
// are refused by the constructor; the maximum itself is accepted; a nil
// Now is the system clock.
func checkOptions(w *world) {
	bad := []Options{{Capacity: -1}, {VisibilityTimeout: -time.Millisecond}, {MaxDeliveries: -1},
		{BaseBackoff: -time.Second}, {MaxBackoff: -time.Second}, {VisibilityTimeout: task.MaxJobVisibilityTimeout + time.Millisecond}}
	for _, o := range bad {
		o.Now = w.clock.Now
		if err := w.tryNew(o); !errors.Is(err, task.ErrInvalidOptions) {
			w.Errorf("constructor with %s = %v, want ErrInvalidOptions", showOptions(o), err)
		}
	}
	st := w.newStore(Options{VisibilityTimeout: task.MaxJobVisibilityTimeout})
	p := st.proc("worker")
	p.mustSubmit(job("job-1", 1))
	if l := p.mustLease(); !l.Expires.Equal(w.clock.Now().Add(task.MaxJobVisibilityTimeout)) {
		w.Errorf("VisibilityTimeout of exactly %v: Expires %v after now", task.MaxJobVisibilityTimeout, l.Expires.Sub(w.clock.Now()))
	}
	w.h.Note("a clock with sub-millisecond precision: the backend keeps its times to the millisecond")
	st = w.newStore(Options{VisibilityTimeout: 10 * time.Second, Now: func() time.Time { return w.clock.Now().Add(700 * time.Microsecond) }})
	p = st.proc("worker")
	p.mustSubmit(job("job-ms", 1))
	now := w.clock.Now() // the backend's clock reads now + 0.7 ms, kept as now
	if in := p.mustInspect("job-ms"); !in.Until.Equal(now) {
		w.Errorf("with the clock at +0.7 ms past a millisecond: a job submitted then has Inspect().Until = %v after the millisecond, want 0: the submission instant is kept to the millisecond too", in.Until.Sub(now))
	}
	if l := p.mustLease(); !l.Expires.Equal(now.Add(10 * time.Second)) {
		w.Errorf("with the clock at +0.7 ms past a millisecond: Lease().Expires = %v after the millisecond, want exactly 10s: times are truncated to the millisecond", l.Expires.Sub(now))
	}
	if in := p.mustInspect("job-ms"); !in.Until.Equal(now.Add(10 * time.Second)) {
		w.Errorf("with the clock at +0.7 ms past a millisecond: Inspect().Until = %v after the millisecond, want exactly 10s", in.Until.Sub(now))
	}
	w.h.Note("Options.Now nil: the backend reads time.Now")
	st = w.newStoreRaw(Options{})
	p = st.proc("worker")
	p.mustSubmit(job("job-2", 1))
	before := time.Now().Truncate(time.Millisecond)
	l := p.mustLease()
	after := time.Now()
	if l.Expires.Before(before.Add(task.DefaultJobVisibility)) || l.Expires.After(after.Add(task.DefaultJobVisibility)) {
		w.Errorf("with Now nil: Expires = %v, want time.Now() + %v (between %v and %v)", l.Expires, task.DefaultJobVisibility,
			before.Add(task.DefaultJobVisibility), after.Add(task.DefaultJobVisibility))
	}
}

// checkConcurrent: two workers (goroutines, or processes on Redis) at
// every transition: exactly one wins, and the state matches the winner.
func checkConcurrent(w *world) {
	o := Options{Capacity: 1, VisibilityTimeout: 10 * time.Second}
	one := func(st *store) (*proc, *proc) { return st.proc("worker A"), st.proc("worker B") }
	withJob := func(st *store) (*proc, *proc) {
		a, b := one(st)
		a.mustSubmit(job("job-1", 1))
		return a, b
	}
	lease := func(p *proc) result { l, err := p.lease(); return result{ok: err == nil, err: err, lease: l} }

	w.h.Note("two workers lease the only job at once")
	w.race(o, 50, withJob, lease, lease, func(st *store, ra, rb result) {
		if ra.ok == rb.ok {
			w.Errorf("two concurrent Lease() of one job: A got %s, B got %s; want exactly one lease and one ErrNoJob",
				describeLease(ra.lease, ra.err), describeLease(rb.lease, rb.err))
		}
		for _, r := range []result{ra, rb} {
			if !r.ok && !errors.Is(r.err, task.ErrNoJob) {
				w.Errorf("the losing Lease() = %v, want ErrNoJob", r.err)
			}
		}
		if in := st.proc("inspector").mustInspect("job-1"); in.Deliveries != 1 {
			w.Errorf("after two concurrent leases: %s, want 1 delivery", in)
		}
	})

	w.h.Note("two clients submit the same job at once")
	submit := func(id string) func(p *proc) result {
		return func(p *proc) result { ok, err := p.submit(job(id, 1)); return result{ok: ok, err: err} }
	}
	w.race(o, 50, one, submit("job-1"), submit("job-1"), func(st *store, ra, rb result) {
		if ra.err != nil || rb.err != nil || ra.ok == rb.ok {
			w.Errorf("two concurrent Submit(job-1): A = %v, %v; B = %v, %v; want one true, one false, no errors", ra.ok, ra.err, rb.ok, rb.err)
		}
	})

	w.h.Note("two clients submit different jobs at once with room for one")
	w.race(o, 50, one, submit("job-1"), submit("job-2"), func(st *store, ra, rb result) {
		full := 0
		for _, r := range []result{ra, rb} {
			if errors.Is(r.err, task.ErrFull) {
				full++
			}
		}
		if !(ra.ok != rb.ok && full == 1) {
			w.Errorf("Submit(job-1) and Submit(job-2) at once with Capacity 1: A = %v, %v; B = %v, %v; want one accepted, one ErrFull", ra.ok, ra.err, rb.ok, rb.err)
		}
	})

	w.h.Note("an Inspect while another worker leases and completes the job: a read is one atomic step too")
	work := func(p *proc) result {
		l, err := p.lease()
		if err == nil {
			err = p.complete(l)
		}
		return result{ok: err == nil, err: err}
	}
	look := func(p *proc) result {
		for range 3 {
			in, err := p.inspect("job-1")
			if err != nil {
				return result{err: err}
			}
			switch {
			case in.State == task.JobQueued && in.Deliveries == 0 && in.Token == 0:
			case (in.State == task.JobLeased || in.State == task.JobDone) && in.Deliveries == 1 && in.Token != 0:
			default:
				return result{err: fmt.Errorf("a state no single moment had: %s", in)}
			}
		}
		return result{ok: true}
	}
	w.race(o, 50, withJob, work, look, func(st *store, ra, rb result) {
		if !ra.ok {
			w.Errorf("Lease and Complete of job-1 beside an Inspect = %v, want nil", ra.err)
		}
		if !rb.ok {
			w.Errorf("Inspect(job-1) beside a Lease and a Complete = %v, want the job as it was before, between or after them", rb.err)
		}
	})

	w.h.Note("a Complete and a Fail of the same lease at once (a retried call racing the first)")
	var held task.JobLease
	leased := func(st *store) (*proc, *proc) {
		a, b := withJob(st)
		held = a.mustLease()
		return a, b
	}
	complete := func(p *proc) result { err := p.complete(held); return result{ok: err == nil, err: err} }
	failIt := func(p *proc) result { err := p.fail(held, errors.New("boom")); return result{ok: err == nil, err: err} }
	w.race(o, 50, leased, complete, failIt, func(st *store, ra, rb result) {
		if ra.ok == rb.ok {
			w.Errorf("Complete and Fail of one lease at once: Complete = %v, Fail = %v; want exactly one to succeed and the other ErrLeaseLost", ra.err, rb.err)
			return
		}
		in := st.proc("inspector").mustInspect("job-1")
		if ra.ok && in.State != task.JobDone || rb.ok && in.State != task.JobQueued {
			w.Errorf("Complete ok = %v, Fail ok = %v, but the job is %s", ra.ok, rb.ok, in)
		}
	})
}

// checkRedisDurable: all state is in Redis under the namespace; a new
// process sees it all; another namespace sees nothing of it.
func checkRedisDurable(w *world) {
	o := Options{Capacity: 2, VisibilityTimeout: 10 * time.Second}
	st := w.newStore(o)
	a := st.proc("process 1")
	a.mustSubmit(job("job-1", 2))
	a.mustSubmit(job("job-2", 1))
	la := a.mustLease()
	if _, err := a.checkpoint(la, 1); err != nil {
		w.Fatalf("Checkpoint = %v", err)
	}
	w.h.Note("process 1 dies; process 2 starts on the same server and namespace")
	b := st.proc("process 2")
	if in := b.mustInspect("job-1"); in.State != task.JobLeased || in.Step != 1 || in.Token != la.Token {
		w.Errorf("process 2: %s, want leased at step 1 with process 1's token %d", in, la.Token)
	}
	if ok, err := b.submit(job("job-1", 2)); ok || err != nil {
		w.Errorf("process 2: Submit(job-1) again = %v, %v, want false, <nil>", ok, err)
	}
	if _, err := b.submit(job("job-3", 1)); !errors.Is(err, task.ErrFull) {
		w.Errorf("process 2: Submit(job-3) with 2 of 2 unfinished = %v, want ErrFull", err)
	}
	lb := b.mustLease()
	if lb.Job.ID != "job-2" || lb.Token <= la.Token {
		w.Errorf("process 2: Lease() = %s, want job-2 with a token greater than %d", lb, la.Token)
	}
	w.advance(10 * time.Second)
	lc := b.mustLease()
	if lc.Job.ID != "job-1" || lc.Step != 1 || lc.Delivery != 2 || lc.Token <= lb.Token {
		w.Errorf("process 2: Lease() after job-1's lease ended = %s, want job-1 at step 1, delivery 2, token above %d", lc, lb.Token)
	}
	if out := st.keysOutside(); len(out) > 0 {
		w.Errorf("keys outside the namespace %q: %q; every key must start with the namespace and ':'", st.ns, out)
	}
	other := w.newStore(o)
	c := other.proc("tenant 2")
	if _, err := c.inspect("job-1"); !errors.Is(err, task.ErrUnknownJob) {
		w.Errorf("another namespace: Inspect(job-1) = %v, want ErrUnknownJob", err)
	}
	c.expectNoJob("in another namespace")
	c.mustSubmit(job("job-1", 3))
	c.mustSubmit(job("job-4", 1))
	if l := c.mustLease(); l.Job.ID != "job-1" || len(l.Job.Steps) != 3 || l.Delivery != 1 {
		w.Errorf("another namespace: Lease() = %s with %d steps, want its own job-1, delivery 1", l, len(l.Job.Steps))
	}

	// Any non-empty ID is a job's, the names of the backend's own keys
	// included: a job key that is the namespace, ':' and the ID, with no
	// segment of its own, puts a job named after an index on that index.
	names := st.keyNames()
	w.h.Note("a third namespace: jobs named after what follows the namespace in the backend's own keys, and each ':' segment of it: %q", names)
	d := w.newStore(Options{VisibilityTimeout: 10 * time.Second}).proc("process 3")
	for _, id := range names {
		if ok, err := d.submit(job(id, 1)); !ok || err != nil {
			w.Errorf("Submit(job %q, named after one of the backend's own keys) = %v, %v, want true, <nil>: a job's key must not be able to land on the backend's other keys", id, ok, err)
		}
	}
	for range names {
		l, err := d.lease()
		if err != nil {
			w.Errorf("Lease() with jobs named after the backend's keys queued = %v, want a job", err)
			break
		}
		if err := d.complete(l); err != nil {
			w.Errorf("Complete(%s) = %v, want <nil>", l, err)
		}
	}
	for _, id := range names {
		if in, err := d.inspect(id); err != nil || in.State != task.JobDone || in.Job.ID != id {
			w.Errorf("Inspect(%q) after every job was leased and completed = %s, %v, want that job, done", id, in, err)
		}
	}
}

// checkRedisErrors: a Redis error on any command of any operation is
// returned as an error, never as a sentinel or a success, and leaves the
// state as it was; a closed client likewise.
func checkRedisErrors(w *world) {
	o := Options{Capacity: 5, VisibilityTimeout: 10 * time.Second}
	type op struct {
		name string
		run  func(p *proc, l task.JobLease) error
	}
	ops := []op{
		{"Submit(new job)", func(p *proc, _ task.JobLease) error {
			ok, err := p.submit(job("job-2", 1))
			return okErr(ok, err)
		}},
		{"Submit(duplicate)", func(p *proc, _ task.JobLease) error {
			ok, err := p.submit(job("job-1", 1))
			if err == nil {
				return fmt.Errorf("ok (returned %v)", ok)
			}
			return err
		}},
		{"Lease()", func(p *proc, _ task.JobLease) error {
			_, err := p.lease()
			return err
		}},
		{"Checkpoint", func(p *proc, l task.JobLease) error {
			_, err := p.checkpoint(l, 1)
			return err
		}},
		{"Complete", func(p *proc, l task.JobLease) error { return p.complete(l) }},
		{"Fail", func(p *proc, l task.JobLease) error { return p.fail(l, errors.New("boom")) }},
		{"Inspect(job-1)", func(p *proc, _ task.JobLease) error {
			_, err := p.inspect("job-1")
			return err
		}},
	}
	for _, o2 := range ops {
		for k := int64(1); k <= 8; k++ {
			st := w.newStore(o)
			setup := st.proc("setup")
			setup.mustSubmit(job("job-1", 1))
			var l task.JobLease
			if strings.HasPrefix(o2.name, "Checkpoint") || o2.name == "Complete" || o2.name == "Fail" || o2.name == "Lease()" {
				if o2.name != "Lease()" {
					l = setup.mustLease()
				}
			}
			before := st.snapshot()
			p := st.proc("worker")
			p.hk.failNext(k)
			err := o2.run(p, l)
			if !p.hk.failed.Load() {
				break // the operation needs fewer than k commands
			}
			if err == nil || strings.HasPrefix(err.Error(), "ok") {
				w.Errorf("%s with Redis failing its command %d = %v, want the error", o2.name, k, err)
			} else if name := sentinelOf(err); name != "" {
				w.Errorf("%s with Redis failing its command %d = %v, reported as %s; want the Redis error, not an answer about the jobs", o2.name, k, err, name)
			}
			if after := st.snapshot(); after != before {
				w.Errorf("%s failed at its command %d, but the state in Redis changed:\nbefore:\n%s\nafter:\n%s", o2.name, k, before, after)
			}
			if w.t.Failed() {
				return
			}
		}
	}
	w.h.Note("a process whose client has been closed")
	st := w.newStore(o)
	setup := st.proc("setup")
	setup.mustSubmit(job("job-1", 1))
	l := setup.mustLease()
	p := st.proc("worker")
	_ = p.rdb.Close()
	for _, o2 := range ops {
		err := o2.run(p, l)
		if err == nil || strings.HasPrefix(err.Error(), "ok") || sentinelOf(err) != "" {
			w.Errorf("%s on a closed client = %v, want the client's error", o2.name, err)
		}
	}
}

func okErr(ok bool, err error) error {
	if err == nil {
		return fmt.Errorf("ok (returned %v)", ok)
	}
	return err
}

// checkCancelled: an operation with a done context returns an error
// wrapping ctx.Err() and changes nothing; so does an engine's Work.
func checkCancelled(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second})
	p := st.proc("worker")
	p.mustSubmit(job("job-1", 2))
	held := p.mustLease()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := p.mustInspect("job-1")
	b := p.b
	errs := map[string]error{}
	_, errs["Submit"] = b.Submit(ctx, job("job-2", 1))
	_, errs["Checkpoint"] = b.Checkpoint(ctx, held, 1)
	errs["Complete"] = b.Complete(ctx, held)
	errs["Fail"] = b.Fail(ctx, held, errors.New("boom"))
	_, errs["Inspect"] = b.Inspect(ctx, "job-1")
	w.advance(10 * time.Second) // visible again: a cancelled Lease must not take it
	_, errs["Lease"] = b.Lease(ctx, "worker")
	for _, name := range []string{"Submit", "Lease", "Checkpoint", "Complete", "Fail", "Inspect"} {
		if !errors.Is(errs[name], context.Canceled) {
			w.Errorf("%s with a cancelled context = %v, want an error wrapping context.Canceled", name, errs[name])
		}
	}
	if after := p.mustInspect("job-1"); !cmp.Equal(before, after) {
		w.Errorf("calls with a cancelled context changed the job:\n%s", cmp.Diff(before, after))
	}
	if _, err := p.inspect("job-2"); !errors.Is(err, task.ErrUnknownJob) {
		w.Errorf("Inspect(job-2) after its Submit had a cancelled context = %v, want ErrUnknownJob", err)
	}

	w.h.Note("an engine whose context is cancelled at each point of a job")
	for _, c := range []struct {
		op string
		f  fault
	}{{"Lease", cancelBefore}, {"Send", cancelBefore}, {"Send", cancelAfter}, {"Checkpoint", cancelBefore}, {"Complete", cancelBefore}} {
		st := w.newStore(Options{VisibilityTimeout: 10 * time.Second})
		wp := st.worker("worker 1")
		wp.proc.mustSubmit(job("job-c", 1))
		wp.plan(c.op, c.f)
		err := wp.work()
		if !errors.Is(err, context.Canceled) {
			w.Errorf("Work() with its context cancelled at %s (%s) = %v, want an error wrapping context.Canceled", c.op, faultNames[c.f], err)
		}
		in := wp.proc.mustInspect("job-c")
		if in.LastError != "" || in.State == task.JobDead || in.State == task.JobDone {
			w.Errorf("after Work() was cancelled at %s: %s; want no failure reported (the lease is left to expire)", c.op, in)
		}
		w.advance(10 * time.Second)
		w2 := st.worker("worker 2")
		if err := w2.work(); err != nil {
			w.Errorf("the next worker after the lease ended: Work() = %v", err)
		}
		if in := w2.proc.mustInspect("job-c"); in.State != task.JobDone || w.delivered("job-c-doc-0") != 1 {
			w.Errorf("after the cancelled Work at %s and a retry: %s, %d deliveries of its step; want done, 1", c.op, in, w.delivered("job-c-doc-0"))
		}
	}
}

// checkEngineRuns: Work runs the steps in order, one Send each, keys
// derived from the job and the step, checkpoints after each, completes.
func checkEngineRuns(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second})
	wp := st.worker("worker 1")
	if err := wp.work(); !errors.Is(err, task.ErrNoJob) {
		w.Errorf("Work() with nothing to do = %v, want ErrNoJob", err)
	}
	a := job("job-a", 3)
	twin := task.Job{ID: "job-b", Account: "acct", Steps: a.Steps} // the same documents, another job
	wp.proc.mustSubmit(a)
	wp.proc.mustSubmit(twin)
	for range 2 {
		if err := wp.work(); err != nil {
			w.Fatalf("Work() = %v, want <nil>", err)
		}
	}
	if err := wp.work(); !errors.Is(err, task.ErrNoJob) {
		w.Errorf("third Work() = %v, want ErrNoJob", err)
	}
	keys := map[string]bool{}
	w.mu.Lock()
	sends := slices.Clone(w.sends)
	w.mu.Unlock()
	if len(sends) != 6 {
		w.Errorf("the provider got %d Sends for 2 jobs of 3 steps, want 6", len(sends))
	}
	for i, s := range sends {
		if want := a.Steps[i%3].DocumentID; s.doc != want {
			w.Errorf("Send %d was for %s, want %s: steps run in order", i+1, s.doc, want)
		}
		if keys[s.key] {
			w.Errorf("Send %d (%s) reuses the key %q: each step of each job needs a key of its own", i+1, s.doc, s.key)
		}
		keys[s.key] = true
		if s.account != "acct" {
			w.Errorf("Send %d ran under account %q, want the job's, \"acct\"", i+1, s.account)
		}
	}
	for _, s := range a.Steps {
		if n := w.delivered(s.DocumentID); n != 2 {
			w.Errorf("%s was delivered %d times, want 2 (once for each job)", s.DocumentID, n)
		}
	}
	for _, id := range []string{"job-a", "job-b"} {
		if in := wp.proc.mustInspect(id); in.State != task.JobDone || in.Step != 3 || in.Deliveries != 1 {
			w.Errorf("after Work: %s, want done at step 3 after 1 delivery", in)
		}
	}

	w.h.Note("jobs a1 (1 step) and a (11 steps): the ID and the index with nothing between them make the key a10 for a1's step 0 and for a's step 10")
	short, long := job("a1", 1), job("a", 11)
	wp.proc.mustSubmit(short)
	wp.proc.mustSubmit(long)
	for range 2 {
		if err := wp.work(); err != nil {
			w.Fatalf("Work() = %v, want <nil>", err)
		}
	}
	w.mu.Lock()
	sends = slices.Clone(w.sends)
	w.mu.Unlock()
	byKey := map[string]string{}
	for _, s := range sends {
		if doc, ok := byKey[s.key]; ok && doc != s.doc {
			w.Errorf("%s and %s were sent with one key, %q: each step of each job needs a key of its own, so a key built from the ID and the index needs a separator", doc, s.doc, s.key)
		}
		byKey[s.key] = s.doc
	}
	for _, j := range []task.Job{short, long} {
		for _, st := range j.Steps {
			if n := w.delivered(st.DocumentID); n != 1 {
				w.Errorf("%s was delivered %d times, want 1", st.DocumentID, n)
			}
		}
	}

	// Job IDs too long for a provider key (255 bytes at most), which differ
	// only in their last byte, with the same documents. A key that fits
	// (a hash of the ID) runs both jobs; a key the provider refuses fails
	// each job for good. A key cut short to fit makes the second job's
	// Sends replays of the first's, and its documents are never sent.
	w.h.Note("two jobs whose IDs are %d bytes long, differ only in their last byte, and send the same documents", len(longID)+1)
	memos := []task.Step{
		{DocumentID: "memo-1", Recipient: "ann@example.com", Subject: "please sign"},
		{DocumentID: "memo-2", Recipient: "ann@example.com", Subject: "please sign"},
	}
	ids := []string{longID + "1", longID + "2"}
	for _, id := range ids {
		wp.proc.mustSubmit(task.Job{ID: id, Account: "acct", Steps: memos})
	}
	for range ids {
		if err := wp.work(); err != nil {
			w.Fatalf("Work() on a job with a %d-byte ID = %v, want <nil>: the job ends done, or failed for good when the provider refuses its key", len(ids[0]), err)
		}
	}
	done := 0
	for i, id := range ids {
		in := wp.proc.mustInspect(id)
		switch {
		case in.State == task.JobDone && in.Step == len(memos):
			done++
		case in.State == task.JobDead && in.Reason == task.ReasonPermanent:
		default:
			w.Errorf("after Work on the job with the %d-byte ID ending in %d: %s, want done at step %d, or dead with reason %q if the provider refused its key", len(id), i+1, in, len(memos), task.ReasonPermanent)
		}
	}
	for _, s := range memos {
		if n := w.delivered(s.DocumentID); n != done {
			w.Errorf("%s was delivered %d times by the two jobs with long IDs, %d of which are done, want %d (once for each done job): each job needs keys of its own, and a key cut short to fit is another job's key", s.DocumentID, n, done, done)
		}
	}

	w.h.Note("jobs \"x\" and \"x \" (a trailing space) with the same document: two jobs")
	x := job("x", 1)
	xs := task.Job{ID: "x ", Account: "acct", Steps: x.Steps}
	wp.proc.mustSubmit(x)
	wp.proc.mustSubmit(xs)
	for range 2 {
		if err := wp.work(); err != nil {
			w.Fatalf("Work() = %v, want <nil>", err)
		}
	}
	done = 0
	for _, id := range []string{"x", "x "} {
		in := wp.proc.mustInspect(id)
		switch {
		case in.State == task.JobDone && in.Step == 1:
			done++
		case id == "x " && in.State == task.JobDead && in.Reason == task.ReasonPermanent:
		default:
			w.Errorf("after Work on job %q: %s, want done at step 1 (or, for \"x \", dead with reason %q if the provider refused its key)", id, in, task.ReasonPermanent)
		}
	}
	if n := w.delivered(x.Steps[0].DocumentID); n != done {
		w.Errorf("%s was delivered %d times by jobs \"x\" and \"x \", %d of which are done, want %d (once for each done job): IDs that differ in a space are two jobs, and a key made from a trimmed ID is the other job's key", x.Steps[0].DocumentID, n, done, done)
	}
}

// longID is the start of a job ID too long for a provider idempotency key.
var longID = strings.Repeat("job-with-a-long-id-", 15) + "number-"

// checkLostReply: a provider error that may have committed (a lost reply)
// or a retryable refusal fails the job for a retry; the retry sends the
// same key, so the provider delivers each step once.
func checkLostReply(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second, BaseBackoff: 2 * time.Second})
	wp := st.worker("worker 1")
	wp.proc.mustSubmit(job("job-1", 2))
	wp.plan("Send", pass, loseReply)
	if err := wp.work(); err != nil {
		w.Errorf("Work() when step 1's reply was lost = %v, want <nil> (the failure is recorded)", err)
	}
	in := wp.proc.mustInspect("job-1")
	if in.State != task.JobQueued || in.Step != 1 || !in.Until.Equal(w.clock.Now().Add(2*time.Second)) || !strings.Contains(in.LastError, "no response") {
		w.Errorf("after step 1's reply was lost: %s visible at +%v, want queued at step 1, visible after the 2s backoff, the timeout as last error",
			in, in.Until.Sub(w.clock.Now()))
	}
	w.advance(2 * time.Second)
	wp.plan("Send", failBefore)
	if err := wp.work(); err != nil {
		w.Errorf("Work() when the provider was unavailable = %v, want <nil>", err)
	}
	w.advance(4 * time.Second)
	if err := wp.work(); err != nil {
		w.Errorf("Work() = %v, want <nil>", err)
	}
	if in := wp.proc.mustInspect("job-1"); in.State != task.JobDone || in.Deliveries != 3 {
		w.Errorf("after the retries: %s, want done after 3 deliveries", in)
	}
	keys := w.keysFor("job-1-doc-1")
	if len(keys) != 2 || keys[0] != keys[1] {
		w.Errorf("the Sends of step 1 used keys %q, want the same key on the retry as on the lost attempt", keys)
	}
	if n := w.delivered("job-1-doc-1"); n != 1 {
		w.Errorf("step 1 was delivered %d times, want exactly 1: the retry must replay the lost reply, not send again", n)
	}
	if n := len(w.keysFor("job-1-doc-0")); n != 1 {
		w.Errorf("step 0 was sent %d times, want 1: its checkpoint was recorded before the lost reply", n)
	}
}

// checkResume: after a crash at any point, the next delivery resumes at
// the checkpoint: steps checkpointed are not sent again; a step sent but
// not checkpointed is sent again with the same key.
func checkResume(w *world) {
	for _, c := range []struct {
		op     string
		f      fault
		resend bool // step 1 is sent again by the next worker
	}{{"Send", crashBefore, false}, {"Send", crashAfter, true}, {"Checkpoint", crashBefore, true}, {"Checkpoint", crashAfter, false}, {"Complete", crashBefore, false}, {"Complete", crashAfter, false}} {
		w.h.Note("worker 1 crashes at step 1's %s (%s)", c.op, faultNames[c.f])
		st := w.newStore(Options{VisibilityTimeout: 10 * time.Second})
		docs := fmt.Sprintf("job-%s-%d", c.op, c.f)
		j := job(docs, 3)
		wp := st.worker("worker 1")
		wp.proc.mustSubmit(j)
		switch c.op {
		case "Send":
			wp.plan("Send", pass, c.f)
		case "Checkpoint":
			wp.plan("Checkpoint", pass, c.f)
		case "Complete":
			wp.plan("Complete", c.f)
		}
		if err := wp.work(); err == nil {
			w.Errorf("Work() of a crashed process = <nil>, want the crash's error")
		}
		w.advance(10 * time.Second)
		w2 := st.worker("worker 2")
		err := w2.work()
		in := w2.proc.mustInspect(j.ID)
		if c.op == "Complete" && c.f == crashAfter {
			if !errors.Is(err, task.ErrNoJob) || in.State != task.JobDone {
				w.Errorf("after a crash once Complete was recorded: Work() = %v, job %s; want ErrNoJob, done", err, in)
			}
		} else if err != nil || in.State != task.JobDone {
			w.Errorf("the next worker: Work() = %v, job %s; want <nil>, done", err, in)
		}
		for i, s := range j.Steps {
			sends := w.keysFor(s.DocumentID)
			want := 1
			if i == 1 && c.resend {
				want = 2
			}
			if len(sends) != want {
				w.Errorf("step %d was sent %d times, want %d: the next delivery resumes at the checkpoint (sends %q)", i, len(sends), want, sends)
			}
			if len(sends) == 2 && sends[0] != sends[1] {
				w.Errorf("step %d was sent again with another key (%q): a lost or unrecorded step is retried with the same key", i, sends)
			}
			if n := w.delivered(s.DocumentID); n != 1 {
				w.Errorf("step %d was delivered %d times, want exactly 1", i, n)
			}
		}
		if w.t.Failed() {
			return
		}
	}
}

// checkPermanentAndLost: a provider refusal that retrying cannot fix
// dead-letters the job at once; a worker whose lease was lost stops: no
// further step, no Complete.
func checkPermanentAndLost(w *world) {
	st := w.newStore(Options{VisibilityTimeout: 10 * time.Second})
	wp := st.worker("worker 1")
	bad := job("job-bad", 3)
	bad.Steps[1].Recipient = "not an address"
	wp.proc.mustSubmit(bad)
	if err := wp.work(); err != nil {
		w.Errorf("Work() on a step the provider refuses = %v, want <nil>", err)
	}
	in := wp.proc.mustInspect("job-bad")
	if in.State != task.JobDead || in.Reason != task.ReasonPermanent || in.Deliveries != 1 || !strings.Contains(in.LastError, "invalid request") {
		w.Errorf("after the provider refused step 1 as invalid: %s, want dead at once, reason %q, the provider's error as last error", in, task.ReasonPermanent)
	}
	if n := len(w.keysFor(bad.Steps[2].DocumentID)); n != 0 {
		w.Errorf("step 2 was sent %d times after step 1 was refused, want 0", n)
	}

	w.h.Note("a job whose account the provider does not accept (surrounding spaces): its Send is refused as unauthorized, not retryable either")
	su := w.newStore(Options{VisibilityTimeout: 10 * time.Second})
	wu := su.worker("worker 1")
	unauth := job("job-unauth", 2)
	unauth.Account = " acct "
	wu.proc.mustSubmit(unauth)
	if err := wu.work(); err != nil {
		w.Errorf("Work() on a job whose account the provider refuses = %v, want <nil>", err)
	}
	if in := wu.proc.mustInspect("job-unauth"); in.State != task.JobDead || in.Reason != task.ReasonPermanent || in.Deliveries != 1 || !strings.Contains(in.LastError, "unauthorized") {
		w.Errorf("after the provider refused step 0 as unauthorized: %s, want dead at once, reason %q, the provider's error as last error: ErrUnauthorized is no more retryable than ErrInvalidRequest (provider.Retryable)", in, task.ReasonPermanent)
	}

	w.h.Note("worker 1 stalls after step 0's Send; its lease ends and worker 2 takes the job over")
	st = w.newStore(Options{VisibilityTimeout: 10 * time.Second})
	w1, w2 := st.worker("worker 1"), st.worker("worker 2")
	j := job("job-z", 3)
	w1.proc.mustSubmit(j)
	w1.plan("Send", pause)
	var err2 error
	w1.onPause = func() {
		w.advance(10 * time.Second)
		err2 = w2.work()
	}
	err1 := w1.work()
	if err2 != nil {
		w.Errorf("worker 2's Work() = %v, want <nil>", err2)
	}
	if !errors.Is(err1, task.ErrLeaseLost) {
		w.Errorf("worker 1's Work() after its lease was lost = %v, want an error wrapping ErrLeaseLost", err1)
	}
	for i, s := range j.Steps {
		if n := w.delivered(s.DocumentID); n != 1 {
			w.Errorf("step %d was delivered %d times, want 1", i, n)
		}
		if i > 0 {
			for _, c := range w.sendsOf(s.DocumentID) {
				if c.worker == "worker 1" {
					w.Errorf("worker 1 sent step %d after its lease was lost: a zombie must stop", i)
				}
			}
		}
	}
	if in := w1.proc.mustInspect("job-z"); in.State != task.JobDone || in.Deliveries != 2 {
		w.Errorf("%s, want done by worker 2 after 2 deliveries", in)
	}
}

// sendsOf returns every Send of doc.
func (w *world) sendsOf(doc string) []sendCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []sendCall
	for _, s := range w.sends {
		if s.doc == doc {
			out = append(out, s)
		}
	}
	return out
}

// checkChaos: a seeded run of workers that crash at random points, stall
// past their leases, and a provider that fails and loses replies. At the
// end every job is done with each step delivered exactly once, or dead
// with a reason; none is lost, no step is delivered twice.
func checkChaos(w *world) {
	seed := suites.Seed(w.t)
	rng := rand.New(rand.NewPCG(uint64(seed), 10))
	w.h.Note("chaos seed %d", seed)
	o := Options{VisibilityTimeout: 10 * time.Second, MaxDeliveries: 4, BaseBackoff: time.Second, MaxBackoff: 8 * time.Second}
	st := w.newStore(o)
	client := st.proc("client")
	var jobs []task.Job
	for i := range 16 {
		j := job(fmt.Sprintf("job-%02d", i), 1+rng.IntN(3))
		if rng.IntN(8) == 0 {
			j.Steps[len(j.Steps)-1].Recipient = "no-at-sign"
		}
		jobs = append(jobs, j)
		client.mustSubmit(j)
		if rng.IntN(3) == 0 {
			if ok, err := client.submit(j); ok || err != nil {
				w.Errorf("a duplicate Submit(%s) = %v, %v, want false, <nil>", j.ID, ok, err)
			}
		}
	}
	chaos := true
	draw := func(op string) fault {
		if !chaos {
			return pass
		}
		r := rng.IntN(100)
		if op == "Send" {
			switch {
			case r < 15:
				return loseReply
			case r < 20:
				return failBefore
			case r < 26:
				return crashAfter
			case r < 30:
				return crashBefore
			case r < 36:
				return pause
			}
			return pass
		}
		switch {
		case r < 5:
			return crashBefore
		case r < 10:
			return crashAfter
		}
		return pass
	}
	started := 0
	pausing := false
	slots := make([]*wproc, 3)
	var spawn func(i int)
	spawn = func(i int) {
		started++
		wp := st.worker(fmt.Sprintf("worker %d", started))
		wp.draw = draw
		wp.onPause = func() {
			if pausing {
				return // one stall at a time
			}
			pausing = true
			defer func() { pausing = false }()
			w.advance(o.VisibilityTimeout + time.Duration(rng.IntN(3000))*time.Millisecond)
			if other := slots[rng.IntN(len(slots))]; other != wp && !other.isCrashed() {
				_ = other.work()
			}
		}
		slots[i] = wp
	}
	for i := range slots {
		spawn(i)
	}
	for range 120 {
		if rng.IntN(10) < 6 {
			i := rng.IntN(len(slots))
			if slots[i].isCrashed() {
				spawn(i)
			}
			_ = slots[i].work()
			if slots[i].isCrashed() {
				spawn(i)
			}
		} else {
			w.advance(time.Duration(rng.IntN(12000)) * time.Millisecond)
		}
	}
	w.h.Note("the chaos ends; the workers drain what is left")
	chaos = false
	for i := range slots {
		if slots[i].isCrashed() {
			spawn(i)
		}
		slots[i].onPause = nil
	}
	for range 40 {
		w.advance(o.VisibilityTimeout)
		for _, wp := range slots {
			for range 20 {
				if err := wp.work(); errors.Is(err, task.ErrNoJob) {
					break
				}
			}
		}
	}
	var report []string
	for _, j := range jobs {
		in, err := client.b.Inspect(context.Background(), j.ID)
		if err != nil {
			w.Errorf("Inspect(%s) = %v: the job was lost", j.ID, err)
			continue
		}
		counts := make([]int, len(j.Steps))
		for i, s := range j.Steps {
			counts[i] = w.delivered(s.DocumentID)
		}
		report = append(report, fmt.Sprintf("%s: deliveries per step %v", in, counts))
		switch in.State {
		case task.JobDone:
			for i, n := range counts {
				if n != 1 {
					w.Errorf("%s is done but its step %d was delivered %d times, want exactly 1", j.ID, i, n)
				}
			}
		case task.JobDead:
			if in.Reason == "" {
				w.Errorf("%s is dead without a reason", j.ID)
			}
			for i, n := range counts {
				if n > 1 {
					w.Errorf("%s is dead and its step %d was delivered %d times, want at most 1", j.ID, i, n)
				}
			}
		default:
			w.Errorf("%s is still %s after the workers drained the backend: neither done nor dead-lettered", j.ID, in.State)
		}
	}
	if w.t.Failed() || debugChaos {
		w.h.Note("final state:\n  %s", strings.Join(report, "\n  "))
	}
	if debugChaos {
		w.t.Log(strings.Join(report, "\n"))
	}
}

var _ = provider.ErrTimeout

var debugChaos = false
