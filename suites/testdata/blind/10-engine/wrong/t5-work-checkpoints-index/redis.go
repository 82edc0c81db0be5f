package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/task"
	goredis "github.com/redis/go-redis/v9"
)

// Redis is a backend whose jobs live in Redis, so that they outlive every
// worker process. Every operation that reads and then writes is one Lua
// script. Keys:
//
//	<ns>:job:<id>  a hash per job
//	<ns>:visible   a sorted set of unfinished jobs by the instant (ms) they are visible from
//	<ns>:token     the last fencing token granted
type Redis struct {
	rdb goredis.UniversalClient
	ns  string
	cfg config
}

// NewRedis returns a backend on rdb whose keys all start with namespace
// followed by ':', or an error wrapping ErrInvalidOptions.
func NewRedis(rdb goredis.UniversalClient, namespace string, o Options) (*Redis, error) {
	cfg, err := newConfig(o)
	if err != nil {
		return nil, err
	}
	if rdb == nil {
		return nil, fmt.Errorf("engine: nil Redis client: %w", ErrInvalidOptions)
	}
	return &Redis{rdb: rdb, ns: namespace, cfg: cfg}, nil
}

func (r *Redis) jobPrefix() string       { return r.ns + ":job:" }
func (r *Redis) jobKey(id string) string { return r.jobPrefix() + id }
func (r *Redis) visibleKey() string      { return r.ns + ":visible" }
func (r *Redis) tokenKey() string        { return r.ns + ":token" }

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// encodeContents encodes a job's account and steps byte for byte (any
// bytes, no separator ambiguity): each string as "<len>:<bytes>".
func encodeContents(j Job) string {
	var b strings.Builder
	put := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	put(j.Account)
	for _, s := range j.Steps {
		put(s.DocumentID)
		put(s.Recipient)
		put(s.Subject)
	}
	return b.String()
}

func decodeContents(id, c string) (Job, error) {
	var fields []string
	for c != "" {
		n, rest, ok := strings.Cut(c, ":")
		if !ok {
			return Job{}, fmt.Errorf("engine: corrupt job %q", id)
		}
		l, err := strconv.Atoi(n)
		if err != nil || l < 0 || l > len(rest) {
			return Job{}, fmt.Errorf("engine: corrupt job %q", id)
		}
		fields = append(fields, rest[:l])
		c = rest[l:]
	}
	if len(fields) == 0 || (len(fields)-1)%3 != 0 {
		return Job{}, fmt.Errorf("engine: corrupt job %q", id)
	}
	j := Job{ID: id, Account: fields[0]}
	for i := 1; i < len(fields); i += 3 {
		j.Steps = append(j.Steps, Step{DocumentID: fields[i], Recipient: fields[i+1], Subject: fields[i+2]})
	}
	return j, nil
}

var submitScript = goredis.NewScript(`
local c = redis.call('HGET', KEYS[1], 'contents')
if c then
  if c == ARGV[2] then return 0 end
  return -1
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return -2 end
redis.call('HSET', KEYS[1], 'contents', ARGV[2], 'state', 'queued', 'deliveries', '0',
  'step', '0', 'token', '0', 'until', ARGV[3], 'lasterror', '', 'reason', '')
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
`)

// Submit: see Memory.Submit.
func (r *Redis) Submit(ctx context.Context, j Job) (bool, error) {
	if err := ctxErr(ctx, "submit"); err != nil {
		return false, err
	}
	if err := validJob(j); err != nil {
		return false, err
	}
	now := r.cfg.clock()
	res, err := submitScript.Run(ctx, r.rdb, []string{r.jobKey(j.ID), r.visibleKey()},
		j.ID, encodeContents(j), ms(now), r.cfg.capacity).Int()
	if err != nil {
		return false, fmt.Errorf("engine: submit %q: %w", j.ID, err)
	}
	switch res {
	case 1:
		return true, nil
	case 0:
		return false, nil
	case -1:
		return false, fmt.Errorf("engine: submit %q: %w", j.ID, ErrConflict)
	default:
		return false, fmt.Errorf("engine: submit %q: %w", j.ID, ErrFull)
	}
}

var leaseScript = goredis.NewScript(`
local now = tonumber(ARGV[2])
while true do
  local r = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, 1)
  if #r == 0 then return {0} end
  local id = r[1]
  local k = ARGV[1] .. id
  local v = redis.call('HMGET', k, 'state', 'deliveries', 'step', 'contents')
  local d = tonumber(v[2])
  if v[1] == 'leased' and d >= tonumber(ARGV[4]) then
    redis.call('HSET', k, 'state', 'dead', 'reason', 'max deliveries', 'until', '0')
    redis.call('ZREM', KEYS[1], id)
  else
    local tok = redis.call('INCR', KEYS[2])
    d = d + 1
    redis.call('HSET', k, 'state', 'leased', 'deliveries', d, 'token', tok, 'until', ARGV[3])
    redis.call('ZADD', KEYS[1], ARGV[3], id)
    return {1, id, v[4], tok, d, tonumber(v[3])}
  end
end
`)

// Lease: see Memory.Lease.
func (r *Redis) Lease(ctx context.Context, worker string) (Lease, error) {
	if err := ctxErr(ctx, "lease"); err != nil {
		return Lease{}, err
	}
	now := r.cfg.clock()
	expires := now.Add(r.cfg.visibility).Truncate(time.Millisecond)
	res, err := leaseScript.Run(ctx, r.rdb, []string{r.visibleKey(), r.tokenKey()},
		r.jobPrefix(), ms(now), ms(expires), r.cfg.maxDeliveries).Slice()
	if err != nil {
		return Lease{}, fmt.Errorf("engine: lease: %w", err)
	}
	if n, _ := res[0].(int64); n == 0 {
		return Lease{}, ErrNoJob
	}
	if len(res) != 6 {
		return Lease{}, fmt.Errorf("engine: lease: unexpected reply %v", res)
	}
	id, _ := res[1].(string)
	contents, _ := res[2].(string)
	tok, _ := res[3].(int64)
	d, _ := res[4].(int64)
	step, _ := res[5].(int64)
	j, err := decodeContents(id, contents)
	if err != nil {
		return Lease{}, err
	}
	return Lease{
		Job:      j,
		Token:    Token(tok),
		Worker:   worker,
		Delivery: int(d),
		Step:     int(step),
		Expires:  fromMS(expires.UnixMilli()),
	}, nil
}

// checkLua is the common head of Checkpoint, Complete and Fail: it returns
// 0 unless the lease (token ARGV[2]) is the job's current one at ARGV[3].
const checkLua = `
local v = redis.call('HMGET', KEYS[1], 'state', 'token', 'until', 'deliveries')
if v[1] ~= 'leased' or tonumber(v[2]) ~= tonumber(ARGV[2]) or tonumber(v[3]) <= tonumber(ARGV[3]) then
  return 0
end
`

var checkpointScript = goredis.NewScript(checkLua + `
redis.call('HSET', KEYS[1], 'step', ARGV[4], 'until', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
return 1
`)

var completeScript = goredis.NewScript(checkLua + `
redis.call('HSET', KEYS[1], 'state', 'done', 'until', '0')
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
`)

// ARGV[4]: "1" for a permanent failure; ARGV[5] the cause's text;
// ARGV[6] MaxDeliveries; ARGV[7], ARGV[8] the backoffs in ns.
var failScript = goredis.NewScript(checkLua + `
local d = tonumber(v[4])
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[1], 'state', 'dead', 'reason', 'permanent failure', 'until', '0', 'lasterror', ARGV[5])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
if d >= tonumber(ARGV[6]) then
  redis.call('HSET', KEYS[1], 'state', 'dead', 'reason', 'max deliveries', 'until', '0', 'lasterror', ARGV[5])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
local b = tonumber(ARGV[7])
local mx = tonumber(ARGV[8])
local i = 1
while i < d and b < mx do
  b = b * 2
  i = i + 1
end
if b > mx then b = mx end
local u = tonumber(ARGV[3]) + math.floor(b / 1000000)
redis.call('HSET', KEYS[1], 'state', 'queued', 'until', u, 'lasterror', ARGV[5])
redis.call('ZADD', KEYS[2], u, ARGV[1])
return 1
`)

func (r *Redis) run(ctx context.Context, s *goredis.Script, op string, l Lease, args ...any) error {
	res, err := s.Run(ctx, r.rdb, []string{r.jobKey(l.Job.ID), r.visibleKey()},
		append([]any{l.Job.ID, int64(l.Token)}, args...)...).Int()
	if err != nil {
		return fmt.Errorf("engine: %s %v: %w", op, l, err)
	}
	if res != 1 {
		return fmt.Errorf("engine: %s %v: %w", op, l, ErrLeaseLost)
	}
	return nil
}

// Checkpoint: see Memory.Checkpoint.
func (r *Redis) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	if err := ctxErr(ctx, "checkpoint"); err != nil {
		return Lease{}, err
	}
	now := r.cfg.clock()
	expires := now.Add(r.cfg.visibility).Truncate(time.Millisecond)
	if err := r.run(ctx, checkpointScript, "checkpoint", l, ms(now), step, ms(expires)); err != nil {
		return Lease{}, err
	}
	l.Step = step
	l.Expires = fromMS(expires.UnixMilli())
	return l, nil
}

// Complete: see Memory.Complete.
func (r *Redis) Complete(ctx context.Context, l Lease) error {
	if err := ctxErr(ctx, "complete"); err != nil {
		return err
	}
	return r.run(ctx, completeScript, "complete", l, ms(r.cfg.clock()))
}

// Fail: see Memory.Fail.
func (r *Redis) Fail(ctx context.Context, l Lease, cause error) error {
	if err := ctxErr(ctx, "fail"); err != nil {
		return err
	}
	if cause == nil {
		cause = errors.New("engine: Fail called with a nil cause")
	}
	perm := "0"
	if errors.Is(cause, ErrPermanent) {
		perm = "1"
	}
	return r.run(ctx, failScript, "fail", l, ms(r.cfg.clock()), perm, cause.Error(),
		r.cfg.maxDeliveries, int64(r.cfg.base), int64(r.cfg.max))
}

// Inspect: see Memory.Inspect.
func (r *Redis) Inspect(ctx context.Context, id string) (Info, error) {
	if err := ctxErr(ctx, "inspect"); err != nil {
		return Info{}, err
	}
	h, err := r.rdb.HGetAll(ctx, r.jobKey(id)).Result()
	if err != nil {
		return Info{}, fmt.Errorf("engine: inspect %q: %w", id, err)
	}
	if len(h) == 0 {
		return Info{}, fmt.Errorf("engine: inspect %q: %w", id, ErrUnknownJob)
	}
	j, err := decodeContents(id, h["contents"])
	if err != nil {
		return Info{}, err
	}
	num := func(f string) int64 {
		n, _ := strconv.ParseInt(h[f], 10, 64)
		return n
	}
	info := Info{
		Job:        j,
		State:      State(h["state"]),
		Deliveries: int(num("deliveries")),
		Step:       int(num("step")),
		Token:      Token(num("token")),
		LastError:  h["lasterror"],
		Reason:     task.DeadLetterReason(h["reason"]),
	}
	if info.State == task.JobQueued || info.State == task.JobLeased {
		info.Until = fromMS(num("until"))
	}
	return info, nil
}
