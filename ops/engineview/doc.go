// Package engineview is an operator's view of the lab-10 engine: it reads
// one namespace of a Redis server laid out as the reference engine
// (solutions/10-engine) documents its keys, and reports how many jobs are
// queued, leased, done and dead, how long the oldest visible job has
// waited, the unfinished jobs by delivery count, the leases with their time
// left, the dead letters' reasons, and how long the backlog takes to drain
// (lab 09's arithmetic, on rates measured over a window).
//
// The layout it reads, all under the namespace (see solutions/10-engine's
// Redis type and docs/10-engine.md):
//
//	<ns>:job:<id>  a hash: job, state (queued, leased, done, dead),
//	               deliveries, step, token, until (Unix ms), lasterr, reason
//	<ns>:due       a sorted set of the unfinished jobs scored by until
//	<ns>:token     the last fencing token granted
//
// A student's lab 10 that keeps this layout is read the same way. The
// layout does not record which worker holds a lease: a hash field named
// worker is read when a backend writes one, and a lease without it is
// reported under "(not recorded)".
//
// Reading never writes. It is not one atomic snapshot: each job's hash is
// read at one instant (one HMGET), but a busy engine moves jobs between the
// reads of two hashes, so totals are exact only on a quiet engine. A read
// costs one SCAN pass and one HMGET per job record, done and dead ones
// included (the layout never deletes a record): a namespace of a million
// jobs is a heavy read, once a second.
package engineview
