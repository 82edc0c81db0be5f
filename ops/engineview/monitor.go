package engineview

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	goredis "github.com/redis/go-redis/v9"
)

// DefaultWindow is the span a Monitor measures rates over when its Window
// is zero.
const DefaultWindow = time.Minute

// LatencyBuckets are the completion-latency histogram's upper bounds, in
// seconds.
var LatencyBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}

// Monitor reads one namespace again and again, and keeps what needs more
// than one read: the arrival and finish rates over a sliding window (the
// drain Estimate) and the completion-latency histogram. It is safe for
// concurrent use: a Collector and a refresh loop may share one.
type Monitor struct {
	rdb       goredis.UniversalClient
	namespace string
	window    time.Duration
	now       func() time.Time

	mu      sync.Mutex
	samples []sample
	seen    map[string]time.Time // unfinished jobs: when each was submitted, or first seen
	first   bool                 // no read yet
	latency prometheus.Histogram
	last    Status
}

// sample is one read's cumulative counts.
type sample struct {
	at       time.Time
	arrived  int // job records
	finished int // done and dead
}

// MonitorOptions configure a Monitor.
type MonitorOptions struct {
	// Window is the span rates are measured over: the reads of the last
	// Window, and the newest read before it. Zero means DefaultWindow.
	Window time.Duration
	// Now is the clock; nil means time.Now. The engine's own clock, when
	// it is not the wall clock.
	Now func() time.Time
}

// NewMonitor returns a Monitor of namespace on rdb. It sends no command.
func NewMonitor(rdb goredis.UniversalClient, namespace string, o MonitorOptions) (*Monitor, error) {
	if namespace == "" {
		return nil, errors.New("engineview: monitor: empty namespace")
	}
	if o.Window < 0 {
		return nil, fmt.Errorf("engineview: monitor: negative window %v", o.Window)
	}
	m := &Monitor{rdb: rdb, namespace: namespace, window: o.Window, now: o.Now,
		seen: map[string]time.Time{}, first: true}
	if m.window == 0 {
		m.window = DefaultWindow
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:        metricPrefix + "completion_latency_seconds",
		Help:        "Time from a job's submission to the read that first saw it done (exact submission time when the monitor saw the job before its first lease, else when it first saw it; a read interval's resolution).",
		ConstLabels: prometheus.Labels{"engine_namespace": namespace},
		Buckets:     LatencyBuckets,
	})
	return m, nil
}

// Namespace is the namespace the monitor reads.
func (m *Monitor) Namespace() string { return m.namespace }

// Poll reads the namespace, records the read, and returns its Status with
// the drain estimate over the window.
func (m *Monitor) Poll(ctx context.Context) (Status, error) {
	// Ids of unfinished and done jobs are needed for the latency, which
	// Status does not list: read them here in the same pass.
	s, unfinished, done, err := readWithIDs(ctx, m.rdb, m.namespace, m.now())
	if err != nil {
		return Status{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.observe(s, unfinished, done)
	m.samples = append(m.samples, sample{at: s.Now, arrived: s.Jobs, finished: s.Done + s.Dead})
	// Keep the reads of the window, and the newest one before it, so that
	// the rates span the whole window once it has passed.
	cut := 0
	for cut+1 < len(m.samples) && s.Now.Sub(m.samples[cut+1].at) >= m.window {
		cut++
	}
	m.samples = m.samples[cut:]
	s.Drain = m.estimate(s)
	m.last = s
	return s, nil
}

// estimate is the drain estimate over the samples kept.
func (m *Monitor) estimate(s Status) Estimate {
	a, b := m.samples[0], m.samples[len(m.samples)-1]
	span := b.at.Sub(a.at)
	if span <= 0 {
		return Estimate{}
	}
	sec := span.Seconds()
	arrival := max(0, float64(b.arrived-a.arrived)/sec)
	finish := max(0, float64(b.finished-a.finished)/sec)
	e := Forecast(s.Unfinished(), arrival, finish)
	e.Window = span
	return e
}

// observe updates the latency histogram from one read: a job seen
// unfinished before and done now completed.
func (m *Monitor) observe(s Status, unfinished map[string]int64, done map[string]bool) {
	first := m.first
	m.first = false
	for id, submitted := range unfinished {
		if _, ok := m.seen[id]; ok {
			continue
		}
		switch {
		case first:
			m.seen[id] = time.Time{} // there before the monitor: its start is unknown
		case submitted != 0:
			m.seen[id] = time.UnixMilli(submitted)
		default:
			m.seen[id] = s.Now
		}
	}
	for id, since := range m.seen {
		if _, ok := unfinished[id]; ok {
			continue
		}
		if done[id] && !since.IsZero() {
			m.latency.Observe(max(0, s.Now.Sub(since)).Seconds())
		}
		delete(m.seen, id) // done, dead, or gone
	}
}

// readWithIDs is ReadAt, plus the IDs of the unfinished jobs (with their
// submission instant in Unix ms when the record shows it: a queued job
// never delivered has until = its submission) and of the done jobs.
func readWithIDs(ctx context.Context, rdb goredis.UniversalClient, ns string, now time.Time) (Status, map[string]int64, map[string]bool, error) {
	unfinished := map[string]int64{}
	done := map[string]bool{}
	s, err := read(ctx, rdb, ns, now, func(id string, j job) {
		switch j.state {
		case StateQueued, StateLeased:
			var submitted int64
			if j.state == StateQueued && j.deliveries == 0 {
				submitted = j.until
			}
			unfinished[id] = submitted
		case StateDone:
			done[id] = true
		}
	})
	return s, unfinished, done, err
}
