package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/task"
)

// Redis is a backend whose jobs live in Redis, so that they outlive every
// worker process: a new Redis value on the same server and namespace (the
// next process) sees everything the last one wrote. Every operation that
// reads and then writes is one atomic step in Redis (a Lua script, or
// WATCH with MULTI/EXEC).
//
// Keys: <ns>:job:<id> a hash per job; <ns>:visible a sorted set of the
// unfinished jobs by the millisecond they are visible from; <ns>:token the
// last fencing token granted.
type Redis struct {
	rdb goredis.UniversalClient
	ns  string
	o   options
}

// NewRedis returns a backend on rdb whose keys all start with namespace
// followed by ':', or an error wrapping ErrInvalidOptions.
func NewRedis(rdb goredis.UniversalClient, namespace string, o Options) (*Redis, error) {
	opts, err := checkOptions(o)
	if err != nil {
		return nil, err
	}
	if rdb == nil {
		return nil, fmt.Errorf("engine: nil Redis client: %w", ErrInvalidOptions)
	}
	return &Redis{rdb: rdb, ns: namespace, o: opts}, nil
}

func (r *Redis) jobKey(id string) string { return r.ns + ":job:" + id }
func (r *Redis) visKey() string          { return r.ns + ":visible" }
func (r *Redis) tokenKey() string        { return r.ns + ":token" }
func (r *Redis) jobPrefix() string       { return r.ns + ":job:" }

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func durMS(d time.Duration) int64 { return d.Milliseconds() }

// A script's reply is a table whose first element says what happened.
const luaHelpers = `
local function s(x) return string.format('%.0f', x) end
`

// KEYS[1] job key, KEYS[2] visible set. ARGV: id, encoded job, now ms, capacity.
var submitScript = goredis.NewScript(luaHelpers + `
local old = redis.call('HGET', KEYS[1], 'job')
if old then
  if old == ARGV[2] then return {'dup'} end
  return {'conflict'}
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return {'full'} end
redis.call('HSET', KEYS[1], 'job', ARGV[2], 'state', 'queued', 'deliveries', '0', 'step', '0',
  'token', '0', 'until', ARGV[3], 'lasterr', '', 'reason', '')
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return {'ok'}
`)

// KEYS[1] visible set, KEYS[2] token counter. ARGV: job key prefix, now ms,
// visibility ms, max deliveries.
var leaseScript = goredis.NewScript(luaHelpers + `
local now = tonumber(ARGV[2])
local maxd = tonumber(ARGV[4])
while true do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, 1)
  if #ids == 0 then return {'nojob'} end
  local id = ids[1]
  local key = ARGV[1] .. id
  local f = redis.call('HMGET', key, 'state', 'deliveries', 'step', 'job')
  local d = tonumber(f[2])
  if f[1] == 'leased' and d >= maxd then
    redis.call('HSET', key, 'state', 'dead', 'reason', 'max deliveries', 'until', '0',
      'lasterr', 'lease expired: delivery ' .. f[2] .. ' ended without an outcome')
    redis.call('ZREM', KEYS[1], id)
  else
    local tok = redis.call('INCR', KEYS[2])
    local untilms = now + tonumber(ARGV[3])
    redis.call('HSET', key, 'state', 'leased', 'deliveries', s(d + 1), 'token', s(tok), 'until', s(untilms))
    redis.call('ZADD', KEYS[1], s(untilms), id)
    return {'ok', f[4], s(tok), s(d + 1), f[3], s(untilms)}
  end
end
`)

// The check shared by checkpoint, complete and fail: KEYS[1] the job key,
// ARGV[1] the token, ARGV[2] now ms.
const luaCurrent = `
local f = redis.call('HMGET', KEYS[1], 'state', 'token', 'until', 'deliveries')
if f[1] ~= 'leased' or f[2] ~= ARGV[1] or tonumber(ARGV[2]) >= tonumber(f[3]) then
  return {'lost'}
end
`

// KEYS[1] job key, KEYS[2] visible set. ARGV: token, now ms, id, step, visibility ms.
var checkpointScript = goredis.NewScript(luaHelpers + luaCurrent + `
local untilms = tonumber(ARGV[2]) + tonumber(ARGV[5])
redis.call('HSET', KEYS[1], 'step', ARGV[4], 'until', s(untilms))
redis.call('ZADD', KEYS[2], s(untilms), ARGV[3])
return {'ok', s(untilms)}
`)

// KEYS[1] job key, KEYS[2] visible set. ARGV: token, now ms, id.
var completeScript = goredis.NewScript(luaHelpers + luaCurrent + `
redis.call('HSET', KEYS[1], 'state', 'done', 'until', '0')
redis.call('ZREM', KEYS[2], ARGV[3])
return {'ok'}
`)

// KEYS[1] job key, KEYS[2] visible set. ARGV: token, now ms, id, cause text,
// permanent (1/0), max deliveries, base backoff ns, max backoff ns.
var failScript = goredis.NewScript(luaHelpers + luaCurrent + `
local d = tonumber(f[4])
if ARGV[5] == '1' then
  redis.call('HSET', KEYS[1], 'state', 'dead', 'reason', 'permanent failure', 'until', '0', 'lasterr', ARGV[4])
  redis.call('ZREM', KEYS[2], ARGV[3])
  return {'ok'}
end
if d >= tonumber(ARGV[6]) then
  redis.call('HSET', KEYS[1], 'state', 'dead', 'reason', 'max deliveries', 'until', '0', 'lasterr', ARGV[4])
  redis.call('ZREM', KEYS[2], ARGV[3])
  return {'ok'}
end
local b = tonumber(ARGV[7])
local mx = tonumber(ARGV[8])
local i = 1
while i < d and b < mx do
  b = b * 2
  i = i + 1
end
if b > mx then b = mx end
local untilms = tonumber(ARGV[2]) + math.floor(b / 1000000)
redis.call('HSET', KEYS[1], 'state', 'queued', 'until', s(untilms), 'lasterr', ARGV[4])
redis.call('ZADD', KEYS[2], s(untilms), ARGV[3])
return {'ok'}
`)

func (r *Redis) run(ctx context.Context, op string, sc *goredis.Script, keys []string, args ...any) ([]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("engine: %s: %w", op, err)
	}
	v, err := sc.Run(ctx, r.rdb, keys, args...).Result()
	if err != nil {
		return nil, fmt.Errorf("engine: %s: redis: %w", op, err)
	}
	res, ok := v.([]any)
	if !ok || len(res) == 0 {
		return nil, fmt.Errorf("engine: %s: unexpected reply %v", op, v)
	}
	return res, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// Submit: see Memory.Submit.
func (r *Redis) Submit(ctx context.Context, j Job) (bool, error) {
	if err := ctxErr(ctx, "submit"); err != nil {
		return false, err
	}
	if err := validJob(j); err != nil {
		return false, err
	}
	now := r.o.clock()
	res, err := r.run(ctx, "submit", submitScript, []string{r.jobKey(j.ID), r.visKey()},
		j.ID, encodeJob(j), ms(now), r.o.capacity)
	if err != nil {
		return false, err
	}
	switch str(res[0]) {
	case "ok":
		return true, nil
	case "dup":
		return false, nil
	case "conflict":
		return false, fmt.Errorf("engine: submit %q: %w", j.ID, ErrConflict)
	case "full":
		return false, fmt.Errorf("engine: submit %q: %w", j.ID, ErrFull)
	}
	return false, fmt.Errorf("engine: submit: unexpected reply %v", res)
}

// Lease: see Memory.Lease.
func (r *Redis) Lease(ctx context.Context, worker string) (Lease, error) {
	now := r.o.clock()
	res, err := r.run(ctx, "lease", leaseScript, []string{r.visKey(), r.tokenKey()},
		r.jobPrefix(), ms(now), durMS(r.o.visibility), r.o.maxDeliv)
	if err != nil {
		return Lease{}, err
	}
	switch str(res[0]) {
	case "nojob":
		return Lease{}, ErrNoJob
	case "ok":
	default:
		return Lease{}, fmt.Errorf("engine: lease: unexpected reply %v", res)
	}
	if len(res) < 6 {
		return Lease{}, fmt.Errorf("engine: lease: unexpected reply %v", res)
	}
	j, err := decodeJob(str(res[1]))
	if err != nil {
		return Lease{}, err
	}
	return Lease{
		Job:      j,
		Token:    Token(num(res[2])),
		Worker:   worker,
		Delivery: int(num(res[3])),
		Step:     int(num(res[4])),
		Expires:  fromMS(num(res[5])),
	}, nil
}

func lost(l Lease) error {
	return fmt.Errorf("engine: lease of %q with token %d: %w", l.Job.ID, l.Token, ErrLeaseLost)
}

// Checkpoint: see Memory.Checkpoint.
func (r *Redis) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	if step < 0 || step > len(l.Job.Steps) {
		return Lease{}, errors.New("engine: checkpoint step out of range")
	}
	now := r.o.clock()
	res, err := r.run(ctx, "checkpoint", checkpointScript, []string{r.jobKey(l.Job.ID), r.visKey()},
		int64(l.Token), ms(now), l.Job.ID, step, durMS(r.o.visibility))
	if err != nil {
		return Lease{}, err
	}
	if str(res[0]) != "ok" || len(res) < 2 {
		return Lease{}, lost(l)
	}
	l.Step = step
	l.Expires = fromMS(num(res[1]))
	l.Job = copyJob(l.Job)
	return l, nil
}

// Complete: see Memory.Complete.
func (r *Redis) Complete(ctx context.Context, l Lease) error {
	now := r.o.clock()
	res, err := r.run(ctx, "complete", completeScript, []string{r.jobKey(l.Job.ID), r.visKey()},
		int64(l.Token), ms(now), l.Job.ID)
	if err != nil {
		return err
	}
	if str(res[0]) != "ok" {
		return lost(l)
	}
	return nil
}

// Fail: see Memory.Fail.
func (r *Redis) Fail(ctx context.Context, l Lease, cause error) error {
	now := r.o.clock()
	text, perm := "", "0"
	if cause != nil {
		text = cause.Error()
	}
	if errors.Is(cause, ErrPermanent) {
		perm = "1"
	}
	res, err := r.run(ctx, "fail", failScript, []string{r.jobKey(l.Job.ID), r.visKey()},
		int64(l.Token), ms(now), l.Job.ID, text, perm, r.o.maxDeliv,
		int64(r.o.baseBackoff), int64(r.o.maxBackoff))
	if err != nil {
		return err
	}
	if str(res[0]) != "ok" {
		return lost(l)
	}
	return nil
}

// Inspect: see Memory.Inspect.
func (r *Redis) Inspect(ctx context.Context, id string) (Info, error) {
	if err := ctxErr(ctx, "inspect"); err != nil {
		return Info{}, err
	}
	f, err := r.rdb.HMGet(ctx, r.jobKey(id), "job", "state", "deliveries", "step", "token", "until", "lasterr", "reason").Result()
	if err != nil {
		return Info{}, fmt.Errorf("engine: inspect: redis: %w", err)
	}
	if f[0] == nil {
		return Info{}, fmt.Errorf("engine: inspect %q: %w", id, ErrUnknownJob)
	}
	j, err := decodeJob(str(f[0]))
	if err != nil {
		return Info{}, err
	}
	return Info{
		Job:        j,
		State:      State(str(f[1])),
		Deliveries: int(num(f[2])),
		Step:       int(num(f[3])),
		Token:      Token(num(f[4])),
		Until:      fromMS(num(f[5])),
		LastError:  str(f[6]),
		Reason:     task.DeadLetterReason(str(f[7])),
	}, nil
}
