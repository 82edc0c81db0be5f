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

// Redis is a backend whose jobs live in Redis, so that they outlive every
// worker process: a new Redis value on the same server and namespace (the
// next process) sees everything the last one wrote. Every operation that
// reads and then writes is one atomic step in Redis (a Lua script, or
// WATCH with MULTI/EXEC).
type Redis struct {
	rdb goredis.UniversalClient
	ns  string
	cfg config
}

// NewRedis returns a backend on rdb whose keys all start with namespace
// followed by ':', or an error wrapping ErrInvalidOptions.
func NewRedis(rdb goredis.UniversalClient, namespace string, o Options) (*Redis, error) {
	c, err := resolve(o)
	if err != nil {
		return nil, err
	}
	return &Redis{rdb: rdb, ns: namespace, cfg: c}, nil
}

// Keys: <ns>:job:<id> (a hash per job), <ns>:vis (a sorted set of the
// unfinished jobs by the instant they are visible from), <ns>:seq (the last
// token granted).
func (r *Redis) jobPrefix() string       { return r.ns + ":job:" }
func (r *Redis) jobKey(id string) string { return r.jobPrefix() + id }
func (r *Redis) visKey() string          { return r.ns + ":vis" }
func (r *Redis) seqKey() string          { return r.ns + ":seq" }

// encodeJob is a length-prefixed, byte-exact encoding of a job.
func encodeJob(j Job) string {
	var b strings.Builder
	w := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	w(j.ID)
	w(j.Account)
	b.WriteString(strconv.Itoa(len(j.Steps)))
	b.WriteByte(';')
	for _, s := range j.Steps {
		w(s.DocumentID)
		w(s.Recipient)
		w(s.Subject)
	}
	return b.String()
}

func decodeJob(s string) (Job, error) {
	bad := errors.New("malformed job record")
	num := func(sep byte) (int, error) {
		i := strings.IndexByte(s, sep)
		if i < 0 {
			return 0, bad
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, bad
		}
		s = s[i+1:]
		return n, nil
	}
	str := func() (string, error) {
		n, err := num(':')
		if err != nil || n > len(s) {
			return "", bad
		}
		v := s[:n]
		s = s[n:]
		return v, nil
	}
	var j Job
	var err error
	if j.ID, err = str(); err != nil {
		return Job{}, err
	}
	if j.Account, err = str(); err != nil {
		return Job{}, err
	}
	n, err := num(';')
	if err != nil {
		return Job{}, err
	}
	j.Steps = make([]Step, n)
	for i := range j.Steps {
		if j.Steps[i].DocumentID, err = str(); err != nil {
			return Job{}, err
		}
		if j.Steps[i].Recipient, err = str(); err != nil {
			return Job{}, err
		}
		if j.Steps[i].Subject, err = str(); err != nil {
			return Job{}, err
		}
	}
	return j, nil
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func fromMs(v int64) time.Time { return time.UnixMilli(v).UTC() }

var submitScript = goredis.NewScript(`
local s = redis.call('HGET', KEYS[1], 'spec')
if s then
  if s == ARGV[1] then return 0 end
  return -1
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return -2 end
redis.call('HSET', KEYS[1], 'spec', ARGV[1], 'state', 'queued', 'del', 0, 'step', 0, 'tok', 0, 'until', ARGV[2], 'err', '', 'reason', '')
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
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
	now := r.cfg.clock().UnixMilli()
	res, err := submitScript.Run(ctx, r.rdb, []string{r.jobKey(j.ID), r.visKey()},
		encodeJob(j), now, r.cfg.capacity, j.ID).Int64()
	if err != nil {
		return false, fmt.Errorf("submit %q: %w", j.ID, err)
	}
	switch res {
	case 1:
		return true, nil
	case 0:
		return false, nil
	case -1:
		return false, fmt.Errorf("submit %q: %w", j.ID, ErrConflict)
	case -2:
		return false, fmt.Errorf("submit %q: %w", j.ID, ErrFull)
	}
	return false, fmt.Errorf("submit %q: unexpected reply %d", j.ID, res)
}

var leaseScript = goredis.NewScript(`
while true do
  local r = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
  if #r == 0 then return {0} end
  local id = r[1]
  local k = ARGV[4] .. id
  local st = redis.call('HMGET', k, 'state', 'del')
  if st[1] == 'leased' and tonumber(st[2]) >= tonumber(ARGV[3]) then
    redis.call('HSET', k, 'state', 'dead', 'reason', ARGV[5], 'until', '')
    redis.call('ZREM', KEYS[1], id)
  else
    local tok = redis.call('INCR', KEYS[2])
    local del = tonumber(st[2]) + 1
    local u = tonumber(ARGV[1]) + tonumber(ARGV[2])
    redis.call('HSET', k, 'state', 'leased', 'del', del, 'tok', tok, 'until', u)
    redis.call('ZADD', KEYS[1], u, id)
    local f = redis.call('HMGET', k, 'spec', 'step')
    return {1, f[1], tok, del, tonumber(f[2]), u}
  end
end
`)

// Lease: see Memory.Lease.
func (r *Redis) Lease(ctx context.Context, worker string) (Lease, error) {
	if err := ctxErr(ctx, "lease"); err != nil {
		return Lease{}, err
	}
	now := r.cfg.clock().UnixMilli()
	res, err := leaseScript.Run(ctx, r.rdb, []string{r.visKey(), r.seqKey()},
		now, ms(r.cfg.vis), r.cfg.maxDeliveries, r.jobPrefix(), string(task.ReasonMaxDeliveries)).Slice()
	if err != nil {
		return Lease{}, fmt.Errorf("lease: %w", err)
	}
	if len(res) == 0 {
		return Lease{}, fmt.Errorf("lease: empty reply")
	}
	if code, _ := res[0].(int64); code == 0 {
		return Lease{}, ErrNoJob
	}
	if len(res) != 6 {
		return Lease{}, fmt.Errorf("lease: unexpected reply %v", res)
	}
	spec, _ := res[1].(string)
	j, err := decodeJob(spec)
	if err != nil {
		return Lease{}, fmt.Errorf("lease: %w", err)
	}
	tok, _ := res[2].(int64)
	del, _ := res[3].(int64)
	step, _ := res[4].(int64)
	u, _ := res[5].(int64)
	return Lease{Job: j, Token: Token(tok), Worker: worker, Delivery: int(del), Step: int(step), Expires: fromMs(u)}, nil
}

// checkLua validates the lease: KEYS[1] the job, ARGV[1] the token, ARGV[2] now.
const checkLua = `
local f = redis.call('HMGET', KEYS[1], 'state', 'tok', 'until', 'del')
if f[1] ~= 'leased' or tonumber(f[2]) ~= tonumber(ARGV[1]) or tonumber(ARGV[2]) >= tonumber(f[3]) then return 0 end
`

var checkpointScript = goredis.NewScript(checkLua + `
local u = tonumber(ARGV[2]) + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'step', ARGV[4], 'until', u)
redis.call('ZADD', KEYS[2], u, ARGV[5])
return u
`)

var completeScript = goredis.NewScript(checkLua + `
redis.call('HSET', KEYS[1], 'state', 'done', 'until', '')
redis.call('ZREM', KEYS[2], ARGV[3])
return 1
`)

// ARGV: 3 cause text, 4 permanent (1/0), 5 max deliveries, 6 base ms,
// 7 max ms, 8 id, 9 reason permanent, 10 reason max deliveries.
var failScript = goredis.NewScript(checkLua + `
local del = tonumber(f[4])
if ARGV[4] == '1' or del >= tonumber(ARGV[5]) then
  local reason = ARGV[10]
  if ARGV[4] == '1' then reason = ARGV[9] end
  redis.call('HSET', KEYS[1], 'state', 'dead', 'reason', reason, 'until', '', 'err', ARGV[3])
  redis.call('ZREM', KEYS[2], ARGV[8])
  return 1
end
local d = tonumber(ARGV[6])
local mx = tonumber(ARGV[7])
for i = 2, del do
  if d >= mx then break end
  d = d * 2
end
if d > mx then d = mx end
local u = tonumber(ARGV[2]) + d
redis.call('HSET', KEYS[1], 'state', 'queued', 'until', u, 'err', ARGV[3])
redis.call('ZADD', KEYS[2], u, ARGV[8])
return 1
`)

func (r *Redis) lost(l Lease) error { return fmt.Errorf("lease %v: %w", l, ErrLeaseLost) }

// Checkpoint: see Memory.Checkpoint.
func (r *Redis) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	if err := ctxErr(ctx, "checkpoint"); err != nil {
		return Lease{}, err
	}
	now := r.cfg.clock().UnixMilli()
	u, err := checkpointScript.Run(ctx, r.rdb, []string{r.jobKey(l.Job.ID), r.visKey()},
		int64(l.Token), now, ms(r.cfg.vis), step, l.Job.ID).Int64()
	if err != nil {
		return Lease{}, fmt.Errorf("checkpoint: %w", err)
	}
	if u == 0 {
		return Lease{}, r.lost(l)
	}
	l.Step = step
	l.Expires = fromMs(u)
	return l, nil
}

// Complete: see Memory.Complete.
func (r *Redis) Complete(ctx context.Context, l Lease) error {
	if err := ctxErr(ctx, "complete"); err != nil {
		return err
	}
	now := r.cfg.clock().UnixMilli()
	res, err := completeScript.Run(ctx, r.rdb, []string{r.jobKey(l.Job.ID), r.visKey()},
		int64(l.Token), now, l.Job.ID).Int64()
	if err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	if res == 0 {
		return r.lost(l)
	}
	return nil
}

// Fail: see Memory.Fail.
func (r *Redis) Fail(ctx context.Context, l Lease, cause error) error {
	if err := ctxErr(ctx, "fail"); err != nil {
		return err
	}
	now := r.cfg.clock().UnixMilli()
	perm := "0"
	if errors.Is(cause, ErrPermanent) {
		perm = "1"
	}
	res, err := failScript.Run(ctx, r.rdb, []string{r.jobKey(l.Job.ID), r.visKey()},
		int64(l.Token), now, cause.Error(), perm, r.cfg.maxDeliveries, ms(r.cfg.base), ms(r.cfg.max),
		l.Job.ID, string(task.ReasonPermanent), string(task.ReasonMaxDeliveries)).Int64()
	if err != nil {
		return fmt.Errorf("fail: %w", err)
	}
	if res == 0 {
		return r.lost(l)
	}
	return nil
}

// Inspect: see Memory.Inspect.
func (r *Redis) Inspect(ctx context.Context, id string) (Info, error) {
	if err := ctxErr(ctx, "inspect"); err != nil {
		return Info{}, err
	}
	vals, err := r.rdb.HMGet(ctx, r.jobKey(id), "spec", "state", "del", "step", "tok", "until", "err", "reason").Result()
	if err != nil {
		return Info{}, fmt.Errorf("inspect %q: %w", id, err)
	}
	if len(vals) != 8 || vals[0] == nil {
		return Info{}, fmt.Errorf("inspect %q: %w", id, ErrUnknownJob)
	}
	s := func(i int) string { v, _ := vals[i].(string); return v }
	n := func(i int) int64 { v, _ := strconv.ParseInt(s(i), 10, 64); return v }
	j, err := decodeJob(s(0))
	if err != nil {
		return Info{}, fmt.Errorf("inspect %q: %w", id, err)
	}
	info := Info{
		Job:        j,
		State:      State(s(1)),
		Deliveries: int(n(2)),
		Step:       int(n(3)),
		Token:      Token(n(4)),
		LastError:  s(6),
		Reason:     task.DeadLetterReason(s(7)),
	}
	if s(5) != "" {
		info.Until = fromMs(n(5))
	}
	return info, nil
}
