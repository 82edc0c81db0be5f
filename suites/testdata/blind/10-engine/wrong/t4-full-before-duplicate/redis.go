package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"
)

// Redis is a backend whose jobs live in Redis, so that they outlive every
// worker process: a new Redis value on the same server and namespace (the
// next process) sees everything the last one wrote. Every operation that
// reads and then writes is one atomic step in Redis (a Lua script, or
// WATCH with MULTI/EXEC).
//
// This one uses WATCH + MULTI/EXEC: each job is a JSON string at
// <ns>:job:<id>; <ns>:visible is a sorted set of the unfinished jobs scored
// by the millisecond they are visible from; <ns>:token is the last token
// granted. Every write of a job also writes <ns>:visible, and every
// operation watches the keys it read, so a concurrent change makes EXEC
// fail and the operation starts again.
type Redis struct {
	rdb goredis.UniversalClient
	ns  string
	cfg config
}

// NewRedis returns a backend on rdb whose keys all start with namespace
// followed by ':', or an error wrapping ErrInvalidOptions.
func NewRedis(rdb goredis.UniversalClient, namespace string, o Options) (*Redis, error) {
	c, err := newConfig(o)
	if err != nil {
		return nil, err
	}
	if rdb == nil {
		return nil, fmt.Errorf("engine: nil redis client: %w", ErrInvalidOptions)
	}
	return &Redis{rdb: rdb, ns: namespace, cfg: c}, nil
}

func (r *Redis) jobKey(id string) string { return r.ns + ":job:" + id }
func (r *Redis) visKey() string          { return r.ns + ":visible" }
func (r *Redis) tokKey() string          { return r.ns + ":token" }

const maxTxRetries = 10000

// txn runs fn in a WATCH transaction on keys, again while EXEC is refused.
func (r *Redis) txn(ctx context.Context, op string, fn func(tx *goredis.Tx) error, keys ...string) error {
	for range maxTxRetries {
		if err := ctxErr(ctx, op); err != nil {
			return err
		}
		err := r.rdb.Watch(ctx, fn, keys...)
		if errors.Is(err, goredis.TxFailedErr) {
			continue
		}
		return err
	}
	return fmt.Errorf("engine: %s: too much contention", op)
}

func getRec(ctx context.Context, c goredis.Cmdable, key string) (*jobRec, error) {
	s, err := c.Get(ctx, key).Result()
	if errors.Is(err, goredis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec jobRec
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return nil, fmt.Errorf("engine: corrupt job at %s: %w", key, err)
	}
	return &rec, nil
}

func encode(rec *jobRec) string {
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// put queues the writes of rec: its record, and its place in the visible set.
func (r *Redis) put(ctx context.Context, p goredis.Pipeliner, rec *jobRec) {
	p.Set(ctx, r.jobKey(rec.Job.ID), encode(rec), 0)
	if rec.unfinished() {
		p.ZAdd(ctx, r.visKey(), goredis.Z{Score: float64(rec.Until), Member: rec.Job.ID})
	} else {
		p.ZRem(ctx, r.visKey(), rec.Job.ID)
	}
}

// Submit: see Memory.Submit.
func (r *Redis) Submit(ctx context.Context, j Job) (bool, error) {
	if err := ctxErr(ctx, "submit"); err != nil {
		return false, err
	}
	if err := validJob(j); err != nil {
		return false, err
	}
	var added bool
	var verdict error
	err := r.txn(ctx, "submit", func(tx *goredis.Tx) error {
		added, verdict = false, nil
		n, err := tx.ZCard(ctx, r.visKey()).Result()
		if err != nil {
			return err
		}
		if n >= int64(r.cfg.capacity) {
			verdict = fmt.Errorf("engine: submit %q: %d unfinished jobs: %w", j.ID, n, ErrFull)
			return nil
		}
		old, err := getRec(ctx, tx, r.jobKey(j.ID))
		if err != nil {
			return err
		}
		if old != nil {
			if !sameJob(old.Job, j) {
				verdict = fmt.Errorf("engine: submit %q: %w", j.ID, ErrConflict)
			}
			return nil
		}
		rec := newRec(j, r.cfg.nowMs())
		_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			r.put(ctx, p, rec)
			return nil
		})
		added = err == nil
		return err
	}, r.jobKey(j.ID), r.visKey())
	if err != nil {
		return false, fmt.Errorf("engine: redis submit %q: %w", j.ID, err)
	}
	return added, verdict
}

// Lease: see Memory.Lease.
func (r *Redis) Lease(ctx context.Context, worker string) (Lease, error) {
	if err := ctxErr(ctx, "lease"); err != nil {
		return Lease{}, err
	}
	var out Lease
	var leased bool
	err := r.txn(ctx, "lease", func(tx *goredis.Tx) error {
		leased = false
		now := r.cfg.nowMs()
		ids, err := tx.ZRangeByScore(ctx, r.visKey(), &goredis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now, 10)}).Result()
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		var last Token
		s, err := tx.Get(ctx, r.tokKey()).Result()
		switch {
		case errors.Is(err, goredis.Nil):
		case err != nil:
			return err
		default:
			v, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil {
				return fmt.Errorf("engine: corrupt token %q: %w", s, perr)
			}
			last = Token(v)
		}
		var changed []*jobRec
		for _, id := range ids {
			if err := tx.Watch(ctx, r.jobKey(id)).Err(); err != nil {
				return err
			}
			rec, err := getRec(ctx, tx, r.jobKey(id))
			if err != nil {
				return err
			}
			if rec == nil || !rec.visible(now) {
				// changed since the range was read (the watched set changed
				// too, so EXEC would fail): start again
				return goredis.TxFailedErr
			}
			changed = append(changed, rec)
			if r.cfg.take(rec, worker, now, last+1) {
				leased = true
				out = rec.lease()
				break
			}
		}
		_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			for _, rec := range changed {
				r.put(ctx, p, rec)
			}
			if leased {
				p.Set(ctx, r.tokKey(), strconv.FormatInt(int64(last+1), 10), 0)
			}
			return nil
		})
		return err
	}, r.visKey(), r.tokKey())
	if err != nil {
		return Lease{}, fmt.Errorf("engine: redis lease for %s: %w", worker, err)
	}
	if !leased {
		return Lease{}, fmt.Errorf("engine: lease for %s: %w", worker, ErrNoJob)
	}
	return out, nil
}

// end runs one transition of l's job, if l is its current lease.
func (r *Redis) end(ctx context.Context, op string, l Lease, apply func(rec *jobRec, now int64)) (*jobRec, error) {
	if err := ctxErr(ctx, op); err != nil {
		return nil, err
	}
	var out *jobRec
	var verdict error
	key := r.jobKey(l.Job.ID)
	err := r.txn(ctx, op, func(tx *goredis.Tx) error {
		out, verdict = nil, nil
		rec, err := getRec(ctx, tx, key)
		if err != nil {
			return err
		}
		now := r.cfg.nowMs()
		if rec == nil || !rec.holds(l, now) {
			verdict = lost(op, l)
			return nil
		}
		apply(rec, now)
		_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			r.put(ctx, p, rec)
			return nil
		})
		if err == nil {
			out = rec
		}
		return err
	}, key, r.visKey())
	if err != nil {
		return nil, fmt.Errorf("engine: redis %s %q: %w", op, l.Job.ID, err)
	}
	return out, verdict
}

// Checkpoint: see Memory.Checkpoint.
func (r *Redis) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	rec, err := r.end(ctx, "checkpoint", l, func(rec *jobRec, now int64) { r.cfg.checkpoint(rec, step, now) })
	if err != nil {
		return Lease{}, err
	}
	return rec.lease(), nil
}

// Complete: see Memory.Complete.
func (r *Redis) Complete(ctx context.Context, l Lease) error {
	_, err := r.end(ctx, "complete", l, func(rec *jobRec, now int64) { r.cfg.complete(rec) })
	return err
}

// Fail: see Memory.Fail.
func (r *Redis) Fail(ctx context.Context, l Lease, cause error) error {
	_, err := r.end(ctx, "fail", l, func(rec *jobRec, now int64) { r.cfg.fail(rec, cause, now) })
	return err
}

// Inspect: see Memory.Inspect.
func (r *Redis) Inspect(ctx context.Context, id string) (Info, error) {
	if err := ctxErr(ctx, "inspect"); err != nil {
		return Info{}, err
	}
	rec, err := getRec(ctx, r.rdb, r.jobKey(id))
	if err != nil {
		return Info{}, fmt.Errorf("engine: redis inspect %q: %w", id, err)
	}
	if rec == nil {
		return Info{}, fmt.Errorf("engine: inspect %q: %w", id, ErrUnknownJob)
	}
	return rec.info(), nil
}
