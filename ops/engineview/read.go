package engineview

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// The job states of the layout's state field.
const (
	StateQueued = "queued"
	StateLeased = "leased"
	StateDone   = "done"
	StateDead   = "dead"
)

// Status is what one Read saw of a namespace.
type Status struct {
	// Namespace is the namespace read, and Now the instant the ages and
	// the leases' time left are measured from (to the millisecond).
	Namespace string
	Now       time.Time

	// Jobs counts every job record: every job ever stored (submitted and
	// not refused). The layout never deletes one, so it only grows.
	Jobs int

	// Queued counts the jobs whose state is queued; Backoff those of them
	// still waiting out a backoff (visible only later).
	Queued  int
	Backoff int

	// Leased counts the jobs whose state is leased, as the engine holds
	// them; LeasesEnded those of them whose lease has ended without an
	// outcome (a crashed or stalled worker): they are visible again, or
	// dead as soon as the next Lease finds them on their last delivery.
	Leased      int
	LeasesEnded int

	// Done and Dead count the finished jobs.
	Done int
	Dead int

	// Visible counts the unfinished jobs a Lease could take now (until at
	// or before Now), and OldestVisibleAge is how long the one visible
	// longest has been: Now minus its until, zero when none is visible.
	Visible          int
	OldestVisibleAge time.Duration

	// Deliveries is the sum of every job's delivery count: every lease
	// ever granted in the namespace.
	Deliveries int64

	// Token is the last fencing token granted (the namespace's counter).
	Token int64

	// ByDeliveries counts the unfinished jobs by how many deliveries each
	// has had, in increasing delivery count.
	ByDeliveries []DeliveryCount

	// Leases lists every lease the engine holds (LeasesEnded included),
	// by worker, then by time left.
	Leases []Lease

	// DeadReasons counts the dead letters by reason, most frequent first,
	// and DeadLetters lists them by job ID.
	DeadReasons []ReasonCount
	DeadLetters []DeadLetter

	// Drain is the drain estimate. Read leaves it zero (one read measures
	// no rate); a Monitor fills it in from its reads over a window.
	Drain Estimate
}

// Unfinished is the backlog: the queued and leased jobs.
func (s Status) Unfinished() int { return s.Queued + s.Leased }

// DeliveryCount is how many unfinished jobs have had Deliveries deliveries.
type DeliveryCount struct {
	Deliveries int
	Jobs       int
}

// Lease is one job the engine holds leased.
type Lease struct {
	JobID string
	// Worker is the hash's worker field, "" when the backend does not
	// record one (the reference engine does not).
	Worker   string
	Token    int64
	Delivery int
	Step     int
	// Left is the lease's time left: its end minus Now, zero or negative
	// for a lease that has ended.
	Left time.Duration
}

// ReasonCount is how many dead letters have Reason.
type ReasonCount struct {
	Reason string
	Jobs   int
}

// DeadLetter is one dead job: its reason and the last error reported.
type DeadLetter struct {
	JobID      string
	Reason     string
	LastError  string
	Deliveries int
}

// fields are the hash fields Read asks for, in order.
var fields = []string{"state", "deliveries", "step", "token", "until", "lasterr", "reason", "worker"}

// Read reads namespace on rdb as it stands now. It never writes.
func Read(ctx context.Context, rdb goredis.UniversalClient, namespace string) (Status, error) {
	return ReadAt(ctx, rdb, namespace, time.Now())
}

// ReadAt is Read with the instant ages and time left are measured from:
// the engine's own clock when it is not the wall clock (a test's).
func ReadAt(ctx context.Context, rdb goredis.UniversalClient, namespace string, now time.Time) (Status, error) {
	return read(ctx, rdb, namespace, now, nil)
}

// read is ReadAt, calling visit (when not nil) with every job record.
func read(ctx context.Context, rdb goredis.UniversalClient, namespace string, now time.Time, visit func(id string, j job)) (Status, error) {
	if namespace == "" {
		return Status{}, errors.New("engineview: read: empty namespace")
	}
	now = now.Truncate(time.Millisecond)
	s := Status{Namespace: namespace, Now: now}
	nowMS := now.UnixMilli()

	tok, err := rdb.Get(ctx, namespace+":token").Int64()
	switch {
	case errors.Is(err, goredis.Nil):
	case err != nil:
		return Status{}, fmt.Errorf("engineview: read %s:token: %w", namespace, err)
	default:
		s.Token = tok
	}

	prefix := namespace + ":job:"
	byDeliveries := map[int]int{}
	reasons := map[string]int{}
	oldest := int64(0)
	var cursor uint64
	for {
		keys, next, err := rdb.Scan(ctx, cursor, globEscape(prefix)+"*", 1000).Result()
		if err != nil {
			return Status{}, fmt.Errorf("engineview: read %s: scan: %w", namespace, err)
		}
		if len(keys) > 0 {
			pipe := rdb.Pipeline()
			cmds := make([]*goredis.SliceCmd, len(keys))
			for i, k := range keys {
				cmds[i] = pipe.HMGet(ctx, k, fields...)
			}
			_, _ = pipe.Exec(ctx) // each command's own error is looked at below
			for i, c := range cmds {
				vals, err := c.Result()
				if err != nil {
					if strings.HasPrefix(err.Error(), "WRONGTYPE") {
						continue // not a job record
					}
					return Status{}, fmt.Errorf("engineview: read %s: %w", keys[i], err)
				}
				j, ok := parseJob(vals)
				if !ok {
					continue // a hash without a state: not a job record
				}
				id := strings.TrimPrefix(keys[i], prefix)
				if visit != nil {
					visit(id, j)
				}
				s.Jobs++
				s.Deliveries += int64(j.deliveries)
				switch j.state {
				case StateQueued, StateLeased:
					byDeliveries[j.deliveries]++
					if j.until <= nowMS {
						s.Visible++
						if oldest == 0 || j.until < oldest {
							oldest = j.until
						}
					}
					if j.state == StateQueued {
						s.Queued++
						if j.until > nowMS {
							s.Backoff++
						}
						break
					}
					s.Leased++
					if j.until <= nowMS {
						s.LeasesEnded++
					}
					s.Leases = append(s.Leases, Lease{JobID: id, Worker: j.worker, Token: j.token,
						Delivery: j.deliveries, Step: j.step, Left: time.Duration(j.until-nowMS) * time.Millisecond})
				case StateDone:
					s.Done++
				case StateDead:
					s.Dead++
					reasons[j.reason]++
					s.DeadLetters = append(s.DeadLetters, DeadLetter{JobID: id, Reason: j.reason, LastError: j.lasterr, Deliveries: j.deliveries})
				default:
					s.Jobs-- // a state this view does not know: not counted
				}
			}
		}
		cursor = next
		if cursor == 0 {
			break
		}
	}
	if s.Visible > 0 {
		s.OldestVisibleAge = time.Duration(nowMS-oldest) * time.Millisecond
	}
	for d, n := range byDeliveries {
		s.ByDeliveries = append(s.ByDeliveries, DeliveryCount{Deliveries: d, Jobs: n})
	}
	slices.SortFunc(s.ByDeliveries, func(a, b DeliveryCount) int { return cmp.Compare(a.Deliveries, b.Deliveries) })
	for r, n := range reasons {
		s.DeadReasons = append(s.DeadReasons, ReasonCount{Reason: r, Jobs: n})
	}
	slices.SortFunc(s.DeadReasons, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Jobs, a.Jobs), cmp.Compare(a.Reason, b.Reason))
	})
	slices.SortFunc(s.Leases, func(a, b Lease) int {
		return cmp.Or(cmp.Compare(a.Worker, b.Worker), cmp.Compare(a.Left, b.Left), cmp.Compare(a.JobID, b.JobID))
	})
	slices.SortFunc(s.DeadLetters, func(a, b DeadLetter) int { return cmp.Compare(a.JobID, b.JobID) })
	return s, nil
}

// job is the part of a job's hash Read uses.
type job struct {
	state                   string
	deliveries, step        int
	token, until            int64
	lasterr, reason, worker string
}

// parseJob reads HMGET's answer for fields; false when the hash has no
// state (no job record). A number that does not parse counts as zero.
func parseJob(vals []any) (job, bool) {
	str := func(i int) string { v, _ := vals[i].(string); return v }
	num := func(i int) int64 { n, _ := strconv.ParseInt(str(i), 10, 64); return n }
	if len(vals) != len(fields) || str(0) == "" {
		return job{}, false
	}
	return job{
		state: str(0), deliveries: int(num(1)), step: int(num(2)), token: num(3), until: num(4),
		lasterr: str(5), reason: str(6), worker: str(7),
	}, true
}

// globEscape escapes the characters SCAN's MATCH pattern gives a meaning,
// so that a namespace matches only itself.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\^-`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
