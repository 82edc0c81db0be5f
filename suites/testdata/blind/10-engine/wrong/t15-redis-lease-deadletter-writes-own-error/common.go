package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

const (
	defaultCapacity      = task.DefaultCapacity
	defaultVisibility    = task.DefaultJobVisibility
	defaultMaxDeliveries = task.DefaultJobMaxDeliveries
	defaultBaseBackoff   = task.DefaultBaseBackoff
	defaultMaxBackoff    = task.DefaultMaxBackoff
	maxVisibility        = task.MaxJobVisibilityTimeout
)

// options is a validated, defaulted copy of Options.
type options struct {
	capacity    int
	visibility  time.Duration
	maxDeliv    int
	baseBackoff time.Duration
	maxBackoff  time.Duration
	now         func() time.Time
}

func checkOptions(o Options) (options, error) {
	if o.Capacity < 0 || o.VisibilityTimeout < 0 || o.MaxDeliveries < 0 || o.BaseBackoff < 0 || o.MaxBackoff < 0 {
		return options{}, fmt.Errorf("engine: negative option: %w", ErrInvalidOptions)
	}
	if o.VisibilityTimeout > maxVisibility {
		return options{}, fmt.Errorf("engine: visibility timeout %v over %v: %w", o.VisibilityTimeout, maxVisibility, ErrInvalidOptions)
	}
	r := options{
		capacity:    o.Capacity,
		visibility:  o.VisibilityTimeout,
		maxDeliv:    o.MaxDeliveries,
		baseBackoff: o.BaseBackoff,
		maxBackoff:  o.MaxBackoff,
		now:         o.Now,
	}
	if r.capacity == 0 {
		r.capacity = defaultCapacity
	}
	if r.visibility == 0 {
		r.visibility = defaultVisibility
	}
	if r.maxDeliv == 0 {
		r.maxDeliv = defaultMaxDeliveries
	}
	if r.baseBackoff == 0 {
		r.baseBackoff = defaultBaseBackoff
	}
	if r.maxBackoff == 0 {
		r.maxBackoff = defaultMaxBackoff
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r, nil
}

// clock reads the injected clock, truncated to the millisecond.
func (o options) clock() time.Time {
	return o.now().Truncate(time.Millisecond)
}

// backoff is min(maxBackoff, baseBackoff*2^(n-1)), without overflow.
func (o options) backoff(n int) time.Duration {
	b := o.baseBackoff
	for i := 1; i < n; i++ {
		if b >= o.maxBackoff {
			break
		}
		b *= 2
	}
	if b > o.maxBackoff {
		b = o.maxBackoff
	}
	return b
}

func validJob(j Job) error {
	if j.ID == "" {
		return fmt.Errorf("engine: empty job ID: %w", ErrInvalidJob)
	}
	if len(j.Steps) == 0 {
		return fmt.Errorf("engine: job %q has no steps: %w", j.ID, ErrInvalidJob)
	}
	return nil
}

func copyJob(j Job) Job {
	j.Steps = append([]Step(nil), j.Steps...)
	return j
}

func sameJob(a, b Job) bool {
	if a.Account != b.Account || len(a.Steps) != len(b.Steps) {
		return false
	}
	for i := range a.Steps {
		if a.Steps[i] != b.Steps[i] {
			return false
		}
	}
	return true
}

// encodeJob writes a job as length-prefixed fields: canonical, and exact
// for any bytes.
func encodeJob(j Job) string {
	var b strings.Builder
	put := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	put(j.ID)
	put(j.Account)
	put(strconv.Itoa(len(j.Steps)))
	for _, s := range j.Steps {
		put(s.DocumentID)
		put(s.Recipient)
		put(s.Subject)
	}
	return b.String()
}

func decodeJob(s string) (Job, error) {
	bad := fmt.Errorf("engine: corrupt job encoding")
	next := func() (string, bool) {
		i := strings.IndexByte(s, ':')
		if i < 0 {
			return "", false
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || i+1+n > len(s) {
			return "", false
		}
		v := s[i+1 : i+1+n]
		s = s[i+1+n:]
		return v, true
	}
	var j Job
	var ok bool
	if j.ID, ok = next(); !ok {
		return Job{}, bad
	}
	if j.Account, ok = next(); !ok {
		return Job{}, bad
	}
	ns, ok := next()
	if !ok {
		return Job{}, bad
	}
	n, err := strconv.Atoi(ns)
	if err != nil || n < 0 {
		return Job{}, bad
	}
	j.Steps = make([]Step, n)
	for i := range j.Steps {
		var st Step
		if st.DocumentID, ok = next(); !ok {
			return Job{}, bad
		}
		if st.Recipient, ok = next(); !ok {
			return Job{}, bad
		}
		if st.Subject, ok = next(); !ok {
			return Job{}, bad
		}
		j.Steps[i] = st
	}
	return j, nil
}

// stepKey is the idempotency key of step i of the job with the given ID:
// the ID is hashed so that any ID (long, with spaces, control characters or
// invalid UTF-8) gives a key the provider accepts, and the index is
// separated from it.
func stepKey(id string, i int) string {
	sum := sha256.Sum256([]byte(id))
	return "job-" + hex.EncodeToString(sum[:]) + "-step-" + strconv.Itoa(i)
}
