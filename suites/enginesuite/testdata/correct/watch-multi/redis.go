package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/task"
)

// Redis is the backend on Redis, written with WATCH and MULTI/EXEC: every
// operation reads the keys it depends on under WATCH, decides in Go, and
// writes in one transaction, which Redis refuses (TxFailedErr) when a
// watched key changed in between; the operation then starts again.
type Redis struct {
	rdb goredis.UniversalClient
	ns  string
	cfg config
}

// NewRedis returns a backend on rdb whose keys start with namespace + ":".
func NewRedis(rdb goredis.UniversalClient, namespace string, o Options) (*Redis, error) {
	cfg, err := resolve(o)
	if err != nil {
		return nil, err
	}
	return &Redis{rdb: rdb, ns: namespace, cfg: cfg}, nil
}

func (r *Redis) due() string             { return r.ns + ":due" }
func (r *Redis) tokenKey() string        { return r.ns + ":token" }
func (r *Redis) jobKey(id string) string { return r.ns + ":job:" + id }

// maxTries bounds the optimistic retries of one operation.
const maxTries = 100

var errContended = errors.New("too much contention: the transaction kept failing")

// optimistic runs fn under WATCH keys until its transaction goes through.
func (r *Redis) optimistic(ctx context.Context, fn func(tx *goredis.Tx) error, keys ...string) error {
	for range maxTries {
		err := r.rdb.Watch(ctx, fn, keys...)
		if errors.Is(err, goredis.TxFailedErr) {
			continue
		}
		return err
	}
	return errContended
}

// jobRecord is a job's hash as read from Redis.
type jobRecord struct {
	exists     bool
	body       string
	state      string
	deliveries int
	step       int
	token      int64
	until      int64
	lasterr    string
	reason     string
}

func readJob(ctx context.Context, c goredis.Cmdable, key string) (jobRecord, error) {
	h, err := c.HGetAll(ctx, key).Result()
	if err != nil {
		return jobRecord{}, err
	}
	if len(h) == 0 {
		return jobRecord{}, nil
	}
	n := func(f string) int64 { v, _ := strconv.ParseInt(h[f], 10, 64); return v }
	return jobRecord{exists: true, body: h["job"], state: h["state"], deliveries: int(n("deliveries")),
		step: int(n("step")), token: n("token"), until: n("until"), lasterr: h["lasterr"], reason: h["reason"]}, nil
}

// Submit stores j, or recognises it as a duplicate.
func (r *Redis) Submit(ctx context.Context, j Job) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := validJob(j); err != nil {
		return false, err
	}
	body := netstrings(j)
	key := r.jobKey(j.ID)
	var created bool
	err := r.optimistic(ctx, func(tx *goredis.Tx) error {
		created = false
		// Every outcome, a refusal too, ends with an EXEC: the job and the
		// count are two reads, and only an EXEC under WATCH proves that
		// nothing changed between them (a refusal decided on them alone
		// could mix two states of the backend).
		validate := func(outcome error) error {
			if _, err := tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
				p.Ping(ctx)
				return nil
			}); err != nil {
				return err
			}
			return outcome
		}
		rec, err := readJob(ctx, tx, key)
		if err != nil {
			return err
		}
		if rec.exists {
			if rec.body != string(body) {
				return validate(fmt.Errorf("submit %q: %w", j.ID, ErrConflict))
			}
			return validate(nil)
		}
		open, err := tx.ZCard(ctx, r.due()).Result()
		if err != nil {
			return err
		}
		if open >= int64(r.cfg.capacity) {
			return validate(fmt.Errorf("submit %q: %w", j.ID, ErrFull))
		}
		now := r.cfg.clock().UnixMilli()
		_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.HSet(ctx, key, "job", string(body), "state", "queued", "deliveries", 0, "step", 0, "token", 0, "until", now, "lasterr", "", "reason", "")
			p.ZAdd(ctx, r.due(), goredis.Z{Score: float64(now), Member: j.ID})
			return nil
		})
		created = err == nil
		return err
	}, key, r.due())
	if err != nil {
		return false, fmt.Errorf("submit %q: %w", j.ID, err)
	}
	return created, nil
}

// Lease delivers the earliest visible job.
func (r *Redis) Lease(ctx context.Context, worker string) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	now := r.cfg.clock()
	var out Lease
	err := r.optimistic(ctx, func(tx *goredis.Tx) error {
		for {
			ids, err := tx.ZRangeByScore(ctx, r.due(), &goredis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: 1}).Result()
			if err != nil {
				return err
			}
			if len(ids) == 0 {
				return ErrNoJob
			}
			id := ids[0]
			key := r.jobKey(id)
			if err := tx.Watch(ctx, key).Err(); err != nil {
				return err
			}
			rec, err := readJob(ctx, tx, key)
			if err != nil {
				return err
			}
			if rec.deliveries >= r.cfg.maxDeliveries {
				_, err := tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
					p.HSet(ctx, key, "state", "dead", "reason", string(task.ReasonMaxDeliveries), "until", 0)
					p.ZRem(ctx, r.due(), id)
					return nil
				})
				if err != nil {
					return err
				}
				// The watched keys changed by our own write: go on under a
				// fresh WATCH.
				if err := tx.Watch(ctx, r.due(), r.tokenKey()).Err(); err != nil {
					return err
				}
				continue
			}
			last, err := tx.Get(ctx, r.tokenKey()).Int64()
			if err != nil && !errors.Is(err, goredis.Nil) {
				return err
			}
			token := last + 1
			expires := now.Add(r.cfg.visibility)
			_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
				p.Set(ctx, r.tokenKey(), token, 0)
				p.HSet(ctx, key, "state", "leased", "deliveries", rec.deliveries+1, "token", token, "until", expires.UnixMilli())
				p.ZAdd(ctx, r.due(), goredis.Z{Score: float64(expires.UnixMilli()), Member: id})
				return nil
			})
			if err != nil {
				return err
			}
			j, err := fromNetstrings(rec.body)
			if err != nil {
				return err
			}
			out = Lease{Job: j, Token: Token(token), Worker: worker, Delivery: rec.deliveries + 1, Step: rec.step, Expires: expires}
			return nil
		}
	}, r.due(), r.tokenKey())
	if errors.Is(err, ErrNoJob) {
		return Lease{}, ErrNoJob
	}
	if err != nil {
		return Lease{}, fmt.Errorf("lease: %w", err)
	}
	return out, nil
}

// fenced runs write for l's job if l is its current lease at now.
func (r *Redis) fenced(ctx context.Context, l Lease, write func(p goredis.Pipeliner, rec jobRecord, now time.Time)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := r.jobKey(l.Job.ID)
	now := r.cfg.clock()
	err := r.optimistic(ctx, func(tx *goredis.Tx) error {
		rec, err := readJob(ctx, tx, key)
		if err != nil {
			return err
		}
		if rec.state != "leased" || rec.token != int64(l.Token) || rec.until <= now.UnixMilli() {
			return ErrLeaseLost
		}
		_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			write(p, rec, now)
			return nil
		})
		return err
	}, key)
	if err != nil {
		return fmt.Errorf("job %q token %d: %w", l.Job.ID, l.Token, err)
	}
	return nil
}

// Checkpoint records step and renews the lease.
func (r *Redis) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	var until time.Time
	err := r.fenced(ctx, l, func(p goredis.Pipeliner, _ jobRecord, now time.Time) {
		until = now.Add(r.cfg.visibility)
		p.HSet(ctx, r.jobKey(l.Job.ID), "step", step, "until", until.UnixMilli())
		p.ZAdd(ctx, r.due(), goredis.Z{Score: float64(until.UnixMilli()), Member: l.Job.ID})
	})
	if err != nil {
		return Lease{}, err
	}
	l.Step, l.Expires = step, until
	return l, nil
}

// Complete marks the job done.
func (r *Redis) Complete(ctx context.Context, l Lease) error {
	return r.fenced(ctx, l, func(p goredis.Pipeliner, _ jobRecord, _ time.Time) {
		p.HSet(ctx, r.jobKey(l.Job.ID), "state", "done", "until", 0)
		p.ZRem(ctx, r.due(), l.Job.ID)
	})
}

// Fail retries the job after the backoff, or dead-letters it.
func (r *Redis) Fail(ctx context.Context, l Lease, cause error) error {
	return r.fenced(ctx, l, func(p goredis.Pipeliner, rec jobRecord, now time.Time) {
		key := r.jobKey(l.Job.ID)
		p.HSet(ctx, key, "lasterr", cause.Error())
		switch {
		case errors.Is(cause, ErrPermanent):
			p.HSet(ctx, key, "state", "dead", "reason", string(task.ReasonPermanent), "until", 0)
			p.ZRem(ctx, r.due(), l.Job.ID)
		case rec.deliveries >= r.cfg.maxDeliveries:
			p.HSet(ctx, key, "state", "dead", "reason", string(task.ReasonMaxDeliveries), "until", 0)
			p.ZRem(ctx, r.due(), l.Job.ID)
		default:
			at := now.Add(r.cfg.backoff(rec.deliveries)).UnixMilli()
			p.HSet(ctx, key, "state", "queued", "until", at)
			p.ZAdd(ctx, r.due(), goredis.Z{Score: float64(at), Member: l.Job.ID})
		}
	})
}

// Inspect reports the job.
func (r *Redis) Inspect(ctx context.Context, id string) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	rec, err := readJob(ctx, r.rdb, r.jobKey(id))
	if err != nil {
		return Info{}, fmt.Errorf("inspect %q: %w", id, err)
	}
	if !rec.exists {
		return Info{}, fmt.Errorf("inspect %q: %w", id, ErrUnknownJob)
	}
	var in Info
	if in.Job, err = fromNetstrings(rec.body); err != nil {
		return Info{}, err
	}
	in.State, in.Deliveries, in.Step, in.Token = State(rec.state), rec.deliveries, rec.step, Token(rec.token)
	if rec.until != 0 {
		in.Until = time.UnixMilli(rec.until).UTC()
	}
	in.LastError, in.Reason = rec.lasterr, task.DeadLetterReason(rec.reason)
	return in, nil
}

// netstrings writes a job as netstrings ("<length>:<bytes>,"): the ID, the
// account, then three per step. Any bytes come back exactly, and the same
// job is always the same text.
func netstrings(j Job) string {
	var b strings.Builder
	put := func(s string) { fmt.Fprintf(&b, "%d:%s,", len(s), s) }
	put(j.ID)
	put(j.Account)
	for _, st := range j.Steps {
		put(st.DocumentID)
		put(st.Recipient)
		put(st.Subject)
	}
	return b.String()
}

// fromNetstrings reads what netstrings wrote.
func fromNetstrings(s string) (Job, error) {
	var fields []string
	for s != "" {
		n, rest, ok := strings.Cut(s, ":")
		size, err := strconv.Atoi(n)
		if !ok || err != nil || size < 0 || len(rest) < size+1 || rest[size] != ',' {
			return Job{}, fmt.Errorf("bad job record at %q", s)
		}
		fields = append(fields, rest[:size])
		s = rest[size+1:]
	}
	if len(fields) < 2 || (len(fields)-2)%3 != 0 {
		return Job{}, fmt.Errorf("bad job record: %d fields", len(fields))
	}
	j := Job{ID: fields[0], Account: fields[1]}
	for f := fields[2:]; len(f) > 0; f = f[3:] {
		j.Steps = append(j.Steps, Step{DocumentID: f[0], Recipient: f[1], Subject: f[2]})
	}
	return j, nil
}
