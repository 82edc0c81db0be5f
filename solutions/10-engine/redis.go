package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/task"
)

// Redis is a backend whose jobs live in Redis, so that they outlive every
// worker process: a new Redis value on the same server and namespace (the
// next process) sees everything the last one wrote. It keeps no state of
// its own but its configuration. Every operation that reads and then
// writes is one Lua script, which Redis runs without interleaving any
// other command: two processes can never both see a job as visible and
// both lease it.
//
// Keys, all under the namespace:
//
//	<ns>:job:<id>  a hash: the job (encodeJob), state, deliveries, step, token,
//	               until (Unix ms), lasterr, reason
//	<ns>:due       a sorted set of the unfinished jobs, scored by until: a
//	               queued job by when it becomes visible, a leased one by
//	               when its lease ends, so the lowest score at or below now
//	               is the next visible job; its size is what Capacity bounds
//	<ns>:token     the last fencing token granted (INCR)
type Redis struct {
	rdb goredis.UniversalClient
	ns  string
	cfg config
}

// NewRedis returns a backend on rdb whose keys all start with namespace
// followed by ':'. It sends no command. ErrInvalidOptions for bad options.
func NewRedis(rdb goredis.UniversalClient, namespace string, o Options) (*Redis, error) {
	cfg, err := resolve(o)
	if err != nil {
		return nil, err
	}
	return &Redis{rdb: rdb, ns: namespace, cfg: cfg}, nil
}

func (r *Redis) due() string             { return r.ns + ":due" }
func (r *Redis) tokenKey() string        { return r.ns + ":token" }
func (r *Redis) jobPrefix() string       { return r.ns + ":job:" }
func (r *Redis) jobKey(id string) string { return r.jobPrefix() + id }
func ms(t time.Time) string              { return strconv.FormatInt(t.UnixMilli(), 10) }
func fromMS(v int64) time.Time           { return time.UnixMilli(v).UTC() }
func (r *Redis) nowMS() string           { return ms(r.cfg.clock()) }
func durMS(d time.Duration) string       { return strconv.FormatInt(d.Milliseconds(), 10) }

// submitScript: KEYS job, due; ARGV id, job JSON, now, capacity.
// Returns 1 (stored), 0 (duplicate), "conflict" or "full".
var submitScript = goredis.NewScript(`
local old = redis.call('HGET', KEYS[1], 'job')
if old then
  if old == ARGV[2] then return 0 end
  return 'conflict'
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 'full' end
redis.call('HSET', KEYS[1], 'job', ARGV[2], 'state', 'queued', 'deliveries', 0, 'step', 0,
  'token', 0, 'until', ARGV[3], 'lasterr', '', 'reason', '')
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
`)

// Submit stores j, visible at once, and returns true; false for a
// resubmission of the same job. ErrConflict, ErrInvalidJob, ErrFull.
func (r *Redis) Submit(ctx context.Context, j Job) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := validJob(j); err != nil {
		return false, err
	}
	// The same job is always the same text (encodeJob), so the script
	// compares contents as strings.
	body, err := encodeJob(j)
	if err != nil {
		return false, fmt.Errorf("submit %q: %w", j.ID, err)
	}
	res, err := submitScript.Run(ctx, r.rdb, []string{r.jobKey(j.ID), r.due()},
		j.ID, body, r.nowMS(), r.cfg.capacity).Result()
	if err != nil {
		return false, fmt.Errorf("submit %q: %w", j.ID, err)
	}
	switch res {
	case int64(1):
		return true, nil
	case int64(0):
		return false, nil
	case "conflict":
		return false, fmt.Errorf("submit %q: %w", j.ID, ErrConflict)
	case "full":
		return false, fmt.Errorf("submit %q: %w", j.ID, ErrFull)
	}
	return false, fmt.Errorf("submit %q: unexpected reply %v", j.ID, res)
}

// leaseScript: KEYS due, token; ARGV now, visibility (ms), max deliveries,
// job key prefix, the dead-letter reason. Returns {id, job JSON, token,
// delivery, step, expires} or nil. A job at the head of due whose
// deliveries are used up (its last lease ended without an outcome) is
// dead-lettered and the next one tried, in the same script.
var leaseScript = goredis.NewScript(`
local now = tonumber(ARGV[1])
while true do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1)
  if #ids == 0 then return false end
  local id = ids[1]
  local key = ARGV[4] .. id
  local d = tonumber(redis.call('HGET', key, 'deliveries'))
  redis.call('ZREM', KEYS[1], id)
  if d >= tonumber(ARGV[3]) then
    redis.call('HSET', key, 'state', 'dead', 'reason', ARGV[5], 'until', 0)
  else
    local token = redis.call('INCR', KEYS[2])
    local expires = now + tonumber(ARGV[2])
    redis.call('HSET', key, 'state', 'leased', 'deliveries', d + 1, 'token', token, 'until', expires)
    redis.call('ZADD', KEYS[1], expires, id)
    return {id, redis.call('HGET', key, 'job'), token, d + 1, tonumber(redis.call('HGET', key, 'step')), expires}
  end
end
`)

// Lease delivers the job that became visible first, or ErrNoJob.
func (r *Redis) Lease(ctx context.Context, worker string) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	res, err := leaseScript.Run(ctx, r.rdb, []string{r.due(), r.tokenKey()},
		r.nowMS(), durMS(r.cfg.visibility), r.cfg.maxDeliveries, r.jobPrefix(), string(task.ReasonMaxDeliveries)).Slice()
	if errors.Is(err, goredis.Nil) {
		return Lease{}, ErrNoJob
	}
	if err != nil {
		return Lease{}, fmt.Errorf("lease: %w", err)
	}
	if len(res) != 6 {
		return Lease{}, fmt.Errorf("lease: unexpected reply %v", res)
	}
	body, _ := res[1].(string)
	j, err := decodeJob(body)
	if err != nil {
		return Lease{}, fmt.Errorf("lease %v: bad job record: %w", res[0], err)
	}
	token, _ := res[2].(int64)
	delivery, _ := res[3].(int64)
	step, _ := res[4].(int64)
	expires, _ := res[5].(int64)
	return Lease{Job: j, Token: Token(token), Worker: worker, Delivery: int(delivery), Step: int(step), Expires: fromMS(expires)}, nil
}

// The fence every script that ends or renews a lease starts with: the
// token must be the job's latest and the lease must still hold. KEYS[1] is
// the job, ARGV[1] the token, ARGV[2] now.
const fence = `
if redis.call('HGET', KEYS[1], 'state') ~= 'leased'
  or redis.call('HGET', KEYS[1], 'token') ~= ARGV[1]
  or tonumber(redis.call('HGET', KEYS[1], 'until')) <= tonumber(ARGV[2]) then
  return 'lost'
end
`

// checkpointScript: KEYS job, due; ARGV token, now, id, step, new until.
var checkpointScript = goredis.NewScript(fence + `
redis.call('HSET', KEYS[1], 'step', ARGV[4], 'until', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[3])
return 'ok'
`)

// Checkpoint records step and renews the lease from now.
func (r *Redis) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	now := r.cfg.clock()
	until := now.Add(r.cfg.visibility)
	if err := r.fenced(ctx, checkpointScript, l, now, step, ms(until)); err != nil {
		return Lease{}, err
	}
	l.Step, l.Expires = step, until
	return l, nil
}

// completeScript: KEYS job, due; ARGV token, now, id.
var completeScript = goredis.NewScript(fence + `
redis.call('HSET', KEYS[1], 'state', 'done', 'until', 0)
redis.call('ZREM', KEYS[2], ARGV[3])
return 'ok'
`)

// Complete marks the job done.
func (r *Redis) Complete(ctx context.Context, l Lease) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.fenced(ctx, completeScript, l, r.cfg.clock())
}

// failScript: KEYS job, due; ARGV token, now, id, cause, permanent (1 or
// 0), max deliveries, the backoff (ms) of this delivery, and the two
// dead-letter reasons (permanent, max deliveries).
var failScript = goredis.NewScript(fence + `
local d = tonumber(redis.call('HGET', KEYS[1], 'deliveries'))
redis.call('HSET', KEYS[1], 'lasterr', ARGV[4])
if ARGV[5] == '1' or d >= tonumber(ARGV[6]) then
  local reason = ARGV[9]
  if ARGV[5] == '1' then reason = ARGV[8] end
  redis.call('HSET', KEYS[1], 'state', 'dead', 'reason', reason, 'until', 0)
  redis.call('ZREM', KEYS[2], ARGV[3])
else
  local at = tonumber(ARGV[2]) + tonumber(ARGV[7])
  redis.call('HSET', KEYS[1], 'state', 'queued', 'until', at)
  redis.call('ZADD', KEYS[2], at, ARGV[3])
end
return 'ok'
`)

// Fail records cause and makes the job visible again after the backoff, or
// dead-letters it.
func (r *Redis) Fail(ctx context.Context, l Lease, cause error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	permanent := "0"
	if errors.Is(cause, ErrPermanent) {
		permanent = "1"
	}
	// The backoff depends on the delivery count, which the lease carries;
	// the script's fence guarantees it is the job's current count.
	return r.fenced(ctx, failScript, l, r.cfg.clock(), cause.Error(), permanent, r.cfg.maxDeliveries,
		durMS(r.cfg.backoff(l.Delivery)), string(task.ReasonPermanent), string(task.ReasonMaxDeliveries))
}

// fenced runs one of the fenced scripts for l's job.
func (r *Redis) fenced(ctx context.Context, s *goredis.Script, l Lease, now time.Time, args ...any) error {
	argv := append([]any{int64(l.Token), ms(now), l.Job.ID}, args...)
	res, err := s.Run(ctx, r.rdb, []string{r.jobKey(l.Job.ID), r.due()}, argv...).Text()
	if err != nil {
		return fmt.Errorf("job %q token %d: %w", l.Job.ID, l.Token, err)
	}
	if res == "lost" {
		return fmt.Errorf("job %q token %d: %w", l.Job.ID, l.Token, ErrLeaseLost)
	}
	return nil
}

// Inspect reports the job with the given ID, or ErrUnknownJob. One HGETALL
// reads the whole hash at one instant.
func (r *Redis) Inspect(ctx context.Context, id string) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	h, err := r.rdb.HGetAll(ctx, r.jobKey(id)).Result()
	if err != nil {
		return Info{}, fmt.Errorf("inspect %q: %w", id, err)
	}
	if len(h) == 0 {
		return Info{}, fmt.Errorf("inspect %q: %w", id, ErrUnknownJob)
	}
	var in Info
	if in.Job, err = decodeJob(h["job"]); err != nil {
		return Info{}, fmt.Errorf("inspect %q: bad job record: %w", id, err)
	}
	num := func(f string) int64 { n, _ := strconv.ParseInt(h[f], 10, 64); return n }
	in.State = State(h["state"])
	in.Deliveries = int(num("deliveries"))
	in.Step = int(num("step"))
	in.Token = Token(num("token"))
	if u := num("until"); u != 0 {
		in.Until = fromMS(u)
	}
	in.LastError = h["lasterr"]
	in.Reason = task.DeadLetterReason(h["reason"])
	return in, nil
}

// jobRecord is a job as its hash stores it. Its strings are byte slices,
// which encoding/json writes as base64, so that any bytes (invalid UTF-8
// included) come back exactly: as plain strings, encoding/json would turn
// invalid bytes into U+FFFD, and two jobs differing only there would look
// the same. encoding/json writes a struct's fields in order, so the same
// job is always the same text.
type jobRecord struct {
	ID      []byte
	Account []byte
	Steps   []stepRecord
}

type stepRecord struct {
	DocumentID, Recipient, Subject []byte
}

func encodeJob(j Job) (string, error) {
	rec := jobRecord{ID: []byte(j.ID), Account: []byte(j.Account)}
	for _, st := range j.Steps {
		rec.Steps = append(rec.Steps, stepRecord{[]byte(st.DocumentID), []byte(st.Recipient), []byte(st.Subject)})
	}
	b, err := json.Marshal(rec)
	return string(b), err
}

func decodeJob(body string) (Job, error) {
	var rec jobRecord
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		return Job{}, err
	}
	j := Job{ID: string(rec.ID), Account: string(rec.Account)}
	for _, st := range rec.Steps {
		j.Steps = append(j.Steps, Step{DocumentID: string(st.DocumentID), Recipient: string(st.Recipient), Subject: string(st.Subject)})
	}
	return j, nil
}
