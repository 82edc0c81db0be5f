package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/ops/opscmd"
	"github.com/fourth-outcome/labkit/provider"
	engine "github.com/fourth-outcome/labkit/solutions/10-engine"
)

// engineSystem is the reference engine on Redis: workers are goroutines
// looping Work.
type engineSystem struct {
	o   options
	rdb *goredis.Client
	cnt *counter
	b   *engine.Redis
}

// newEngineSystem returns the engine on a client of its own for ro.
func newEngineSystem(ro *goredis.Options, o options) (*engineSystem, error) {
	rdb := goredis.NewClient(ro)
	cnt := &counter{}
	rdb.AddHook(cnt)
	// Every job is submitted before the first worker starts: the capacity
	// must hold them all. The visibility timeout is the default (30 s), far
	// longer than any no-op job.
	b, err := engine.NewRedis(rdb, o.namespace, engine.Options{Capacity: o.jobs})
	if err != nil {
		rdb.Close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	return &engineSystem{o: o, rdb: rdb, cnt: cnt, b: b}, nil
}

func (s *engineSystem) name() string { return "engine" }
func (s *engineSystem) sent() int64  { return s.cnt.n.Load() }
func (s *engineSystem) close()       { s.rdb.Close() }

// reset deletes the engine's namespace.
func (s *engineSystem) reset(ctx context.Context) error {
	return deleteMatching(ctx, s.rdb, globEscape(s.o.namespace)+":*")
}

// submit submits job i, with one step.
func (s *engineSystem) submit(ctx context.Context, _ *recorder, i int) error {
	id := jobID(i)
	_, err := s.b.Submit(ctx, engine.Job{ID: id, Account: "bench", Steps: []engine.Step{{DocumentID: id + "-doc", Recipient: "signer@example.com"}}})
	return err
}

// work starts the workers, goroutines looping Work, and waits until every
// job is done.
func (s *engineSystem) work(ctx context.Context, rec *recorder) (stop func(), err error) {
	eng := engine.NewEngine(doneBackend{Backend: s.b, done: rec.done}, noopProvider{})
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var firstErr atomic.Pointer[error]
	for w := 1; w <= s.o.workers; w++ {
		name := fmt.Sprintf("worker-%d", w)
		wg.Go(func() {
			for wctx.Err() == nil {
				err := eng.Work(wctx, name)
				switch {
				case err == nil:
				case errors.Is(err, engine.ErrNoJob):
					// The tail of the run: the last jobs are leased by
					// other workers. Poll as a worker of a real pool would.
					_ = opscmd.Sleep(wctx, time.Millisecond)
				case wctx.Err() != nil:
				default:
					firstErr.CompareAndSwap(nil, &err)
					cancel()
				}
			}
		})
	}
	stop = func() { cancel(); wg.Wait() }
	select {
	case <-rec.all:
		return stop, nil
	case <-wctx.Done():
		stop()
		if e := firstErr.Load(); e != nil {
			return nil, fmt.Errorf("a worker: %w", *e)
		}
		return nil, fmt.Errorf("%d of %d jobs not done: %w", rec.remaining(), len(rec.doneAt), ctx.Err())
	}
}

// doneBackend is the engine's backend that reports each job it completes.
type doneBackend struct {
	engine.Backend
	done func(id string)
}

// Complete completes the job and, once Redis said so, reports it done.
func (b doneBackend) Complete(ctx context.Context, l engine.Lease) error {
	err := b.Backend.Complete(ctx, l)
	if err == nil {
		b.done(l.Job.ID)
	}
	return err
}

// noopProvider is a provider whose every Send succeeds at once: the step
// costs nothing, and the bench measures the queue alone.
type noopProvider struct{}

// Send succeeds at once.
func (noopProvider) Send(_ context.Context, _, key string, req provider.SendRequest) (provider.Receipt, error) {
	return provider.Receipt{RequestID: "sr_" + key, Key: key, DocumentID: req.DocumentID, Recipient: req.Recipient,
		Reference: req.Reference, Status: provider.StatusSent}, nil
}

// Status knows no key: the engine never calls it.
func (noopProvider) Status(context.Context, string, string) (provider.Receipt, error) {
	return provider.Receipt{}, provider.ErrNotFound
}

// Find finds nothing: the engine never calls it.
func (noopProvider) Find(context.Context, string, string) ([]provider.Receipt, error) {
	return nil, nil
}

// asynqSystem is asynq on the same Redis: one server of N workers
// (Concurrency) on a queue of its own.
type asynqSystem struct {
	o      options
	rdb    *goredis.Client
	cnt    *counter
	client *asynq.Client
}

// newAsynqSystem returns asynq on a client of its own for ro.
func newAsynqSystem(ro *goredis.Options, o options) *asynqSystem {
	rdb := goredis.NewClient(ro)
	cnt := &counter{}
	rdb.AddHook(cnt)
	return &asynqSystem{o: o, rdb: rdb, cnt: cnt, client: asynq.NewClientFromRedisClient(rdb)}
}

func (s *asynqSystem) name() string { return "asynq" }
func (s *asynqSystem) sent() int64  { return s.cnt.n.Load() }
func (s *asynqSystem) close()       { s.client.Close(); s.rdb.Close() }

// reset deletes asynq's keys of the queue, and the queue from asynq's list.
func (s *asynqSystem) reset(ctx context.Context) error {
	if err := deleteMatching(ctx, s.rdb, "asynq:"+globEscape("{"+s.o.queue+"}")+":*"); err != nil {
		return err
	}
	return s.rdb.SRem(ctx, "asynq:queues", s.o.queue).Err()
}

// submit enqueues job i as a task whose ID is the job's.
func (s *asynqSystem) submit(ctx context.Context, _ *recorder, i int) error {
	_, err := s.client.EnqueueContext(ctx, asynq.NewTask("noop", nil), asynq.Queue(s.o.queue), asynq.TaskID(jobID(i)))
	return err
}

// work starts an asynq server and waits until asynq has marked every task
// done in Redis. asynq has no hook for that moment, so the bench watches
// its client's commands for asynq's "done" script (keys active, lease,
// task, processed:<day>, processed; first argument the task's ID) and
// counts the task done once Redis answered it. The handler's own count
// checks that nothing was missed.
func (s *asynqSystem) work(ctx context.Context, rec *recorder) (stop func(), err error) {
	processed := "asynq:{" + s.o.queue + "}:processed"
	observe := func(cmd goredis.Cmder) {
		a := cmd.Args()
		if len(a) < 9 || (cmd.Name() != "evalsha" && cmd.Name() != "eval") || fmt.Sprint(a[2]) != "5" || a[7] != processed {
			return
		}
		if id, ok := a[8].(string); ok {
			rec.done(id)
		}
	}
	s.cnt.observe.Store(&observe)
	var handled atomic.Int64
	log := &asynqLogger{}
	srv := asynq.NewServerFromRedisClient(s.rdb, asynq.Config{
		Concurrency: s.o.workers,
		Queues:      map[string]int{s.o.queue: 1},
		Logger:      log,
		LogLevel:    asynq.WarnLevel,
	})
	err = srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		handled.Add(1)
		return nil
	}))
	if err != nil {
		s.cnt.observe.Store(nil)
		return nil, fmt.Errorf("start: %w", err)
	}
	stop = func() { srv.Shutdown(); s.cnt.observe.Store(nil) }
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var allHandled time.Time
	for {
		select {
		case <-rec.all:
			return stop, nil
		case <-ctx.Done():
			stop()
			return nil, fmt.Errorf("%d of %d tasks not done (%d handled; asynq's last warning: %s): %w",
				rec.remaining(), len(rec.doneAt), handled.Load(), log.last(), ctx.Err())
		case <-tick.C:
			if handled.Load() < int64(len(rec.doneAt)) {
				continue
			}
			if allHandled.IsZero() {
				allHandled = time.Now()
			} else if time.Since(allHandled) > 10*time.Second {
				stop()
				return nil, fmt.Errorf("every task handled, but asynq's done script seen for only %d of %d: has asynq changed its scripts?",
					len(rec.doneAt)-rec.remaining(), len(rec.doneAt))
			}
		}
	}
}

// asynqLogger keeps asynq's last warning or error, for an error message,
// and prints nothing.
type asynqLogger struct {
	mu  sync.Mutex
	msg string
}

// keep keeps a message.
func (l *asynqLogger) keep(args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msg = fmt.Sprint(args...)
}

// last is the last message kept, or "none".
func (l *asynqLogger) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.msg == "" {
		return "none"
	}
	return l.msg
}

func (l *asynqLogger) Debug(...any)      {}
func (l *asynqLogger) Info(...any)       {}
func (l *asynqLogger) Warn(args ...any)  { l.keep(args...) }
func (l *asynqLogger) Error(args ...any) { l.keep(args...) }
func (l *asynqLogger) Fatal(args ...any) { l.keep(args...) }
