package engineview

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fourth-outcome/labkit/task"
)

// metricPrefix starts every metric's name.
const metricPrefix = "labkit_engine_"

// Collector is a prometheus.Collector that polls its Monitor at every
// scrape and exposes the same numbers status prints. Gauges: the depth
// (queued, in backoff, leased, leases ended, visible), the oldest visible
// job's age, the unfinished jobs by delivery count, the leases by worker,
// and the drain estimate. Counters: the jobs submitted, the deliveries, the
// completions and the dead letters by reason. A histogram: the completion
// latency. Every metric carries the engine_namespace label.
type Collector struct {
	m       *Monitor
	timeout time.Duration
	descs   map[string]*prometheus.Desc
}

// NewCollector returns a Collector of m whose scrapes read Redis with at
// most timeout (zero means five seconds).
func NewCollector(m *Monitor, timeout time.Duration) *Collector {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	c := &Collector{m: m, timeout: timeout, descs: map[string]*prometheus.Desc{}}
	ns := prometheus.Labels{"engine_namespace": m.namespace}
	add := func(name, help string, labels ...string) {
		c.descs[name] = prometheus.NewDesc(metricPrefix+name, help, labels, ns)
	}
	add("up", "1 when the last read of the namespace succeeded, 0 when it failed.")
	add("queued_jobs", "Jobs whose state is queued (waiting for a lease, or out their backoff).")
	add("backoff_jobs", "Queued jobs still waiting out a backoff.")
	add("leased_jobs", "Jobs whose state is leased, as the engine holds them (ended leases included).")
	add("ended_leases", "Leased jobs whose lease ended without an outcome: visible again, or dead at the next lease on their last delivery.")
	add("visible_jobs", "Unfinished jobs a lease could take now.")
	add("oldest_visible_job_age_seconds", "How long the job visible longest has been visible; 0 when none is.")
	add("unfinished_jobs_by_deliveries", "Unfinished jobs by how many deliveries each has had.", "deliveries")
	add("leases", "Leases held, by worker (\"\" when the layout does not record it).", "worker")
	add("drain_estimate_seconds", "Time to drain the backlog by lab 09's arithmetic over the monitor's window; +Inf when jobs do not finish faster than they arrive (never). Absent until two reads.")
	add("arrival_rate", "Jobs submitted per second over the monitor's window. Absent until two reads.")
	add("finish_rate", "Jobs completed or dead-lettered per second over the monitor's window. Absent until two reads.")
	add("submitted_jobs_total", "Jobs stored (every job record of the namespace).")
	add("deliveries_total", "Deliveries (leases granted) of every job.")
	add("completions_total", "Jobs done.")
	add("dead_letters_total", "Jobs dead-lettered, by reason.", "reason")
	return c
}

// Describe sends every metric's descriptor.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
	c.m.latency.Describe(ch)
}

// Collect polls the monitor and sends its numbers. When the read fails it
// sends up 0 and the histogram only.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	s, err := c.m.Poll(ctx)
	gauge := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, v, labels...)
	}
	counter := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, v, labels...)
	}
	c.m.latency.Collect(ch)
	if err != nil {
		gauge("up", 0)
		return
	}
	gauge("up", 1)
	gauge("queued_jobs", float64(s.Queued))
	gauge("backoff_jobs", float64(s.Backoff))
	gauge("leased_jobs", float64(s.Leased))
	gauge("ended_leases", float64(s.LeasesEnded))
	gauge("visible_jobs", float64(s.Visible))
	gauge("oldest_visible_job_age_seconds", s.OldestVisibleAge.Seconds())
	for _, d := range s.ByDeliveries {
		gauge("unfinished_jobs_by_deliveries", float64(d.Jobs), strconv.Itoa(d.Deliveries))
	}
	byWorker := map[string]int{}
	for _, l := range s.Leases {
		byWorker[l.Worker]++
	}
	for w, n := range byWorker {
		gauge("leases", float64(n), w)
	}
	if e := s.Drain; e.Measured() {
		v := e.Drain.Seconds()
		if e.Never {
			v = math.Inf(1)
		}
		gauge("drain_estimate_seconds", v)
		gauge("arrival_rate", e.Arrival)
		gauge("finish_rate", e.Finish)
	}
	counter("submitted_jobs_total", float64(s.Jobs))
	counter("deliveries_total", float64(s.Deliveries))
	counter("completions_total", float64(s.Done))
	// The engine's two reasons are always there, at zero before the first
	// dead letter, so that rate() sees the first one.
	dead := map[string]int{string(task.ReasonPermanent): 0, string(task.ReasonMaxDeliveries): 0}
	for _, r := range s.DeadReasons {
		dead[r.Reason] = r.Jobs
	}
	for r, n := range dead {
		counter("dead_letters_total", float64(n), r)
	}
}
