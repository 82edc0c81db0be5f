// Package interview holds the course's interview drills: the scenarios of
// docs/interview.md with the points a strong answer names, numeric drills
// generated from a seed and checked with a tolerance, and the parsing of
// the model answers out of docs/interview.md, so a drill shows the one
// answer the course gives to each question.
package interview

// Scenario is a drill on one prompt of docs/interview.md.
type Scenario struct {
	ID      string
	Heading string   // the section of docs/interview.md that holds the prompt and the model answers
	Points  []string // what a strong answer names, for the learner to score themselves against
}

// Scenarios are the scenario drills, in the order the course suggests.
var Scenarios = []Scenario{
	{ID: "duplicates", Heading: "Diagnosing duplicate actions in an agent workflow", Points: []string{
		"evidence first, at the external system: two requests, two provider ids, their keys and timestamps",
		"the identity that should have made them one operation: different keys, a key past retention, or no key",
		"the failure window when both carry the key: record after work, lookup and insert in two steps, in-progress misread, timeout treated as failure, claim expired during a pause",
		"reproduce the exact boundary in a test (a provider that commits and drops its reply) and assert one request",
		"the fix: an operation id saved before the first attempt, reused as the provider's key, and reconciliation by reference before any resend",
	}},
	{ID: "queue-depth", Heading: "A queue whose depth grows continuously", Points: []string{
		"steady growth means arrivals exceed capacity, not a burst",
		"measure both rates (retries count as arrivals); growth = arrival - capacity",
		"watch the age of the oldest item, not only depth",
		"find why capacity fell or arrivals rose (slow dependency, retry storm, noisy tenant, deploy)",
		"the legitimate moves: slow producers, shed or reject, bound the buffer, degrade; more consumers only if downstream can take it",
		"recovery time = backlog / (capacity - arrival), or never",
	}},
	{ID: "defend-key", Heading: "Defending an idempotency-key decision to a customer", Points: []string{
		"state the guarantee in the customer's terms: same key and content, one effect within the window",
		"scope: keys belong to the account that created them",
		"fingerprint: the same key with a different request is rejected, and a refused request may be resent",
		"retention: a key is kept at least 24 hours, after that it counts as new",
		"recovery searches by reference before resending: late and once over fast and maybe twice",
		"offer a way forward: a clear error, documented window, a status endpoint",
	}},
	{ID: "log-or-queue", Heading: "Kafka-style log or queue?", Points: []string{
		"a log keeps messages, ordered per partition, replayable by many consumers; offsets, partition-bound parallelism, head-of-line blocking",
		"a queue acknowledges per message, redelivers after a visibility timeout, dead-letters, scales competing consumers; no replay",
		"tie the choice to the workload: independent, slow, failure-prone tasks point to a queue",
		"either way delivery is at least once, so handlers are idempotent",
	}},
	{ID: "safe-retries", Heading: "Making retries safe", Points: []string{
		"two meanings: no second effect, and no extra load that sinks the dependency",
		"an id before the first attempt, claimed atomically, result kept for the dedup window",
		"the same id as the provider's idempotency key",
		"bounded attempts, one deadline passed downstream, exponential backoff with a cap and full jitter",
		"never retry what cannot succeed (invalid input, parameter mismatch); honour Retry-After",
		"a retry budget, and retries at one layer only (3 layers of 3 attempts is 27 calls)",
		"the retry rate as its own metric",
	}},
	{ID: "queue-collapse", Heading: "Preventing queue collapse", Points: []string{
		"collapse is accepting more than you can finish: latency, timeouts, retries, more load",
		"admission control: a bounded queue that rejects fast with a clear error",
		"admission before the idempotency claim (no key left claimed for a refused job)",
		"isolation per tenant; shed low-value and expire too-old work",
		"scale on age and lag, only up to what downstream sustains; budgeted, jittered client retries",
		"alert on the age of the oldest item",
	}},
	{ID: "agents", Heading: "Coordinating several agents on a shared task", Points: []string{
		"durable workflow state as the only source of truth, separate from transient messages",
		"a lease per sub-task, renewed while working, so a dead agent's work comes back",
		"stop at once when a renewal fails; check the lease before each side effect",
		"fencing tokens that only increase, checked by the store, against paused agents",
		"checkpoints after each durable effect, and per-step keys so replaying a step is harmless",
		"dead-lettering by delivery count, and compensation or a human for irreversible actions",
	}},
	{ID: "recovery-calculation", Heading: "The recovery-time calculation", Points: []string{
		"only capacity minus arrival drains the backlog: 100 - 80 = 20 jobs per second",
		"12,000 / 20 = 600 seconds, ten minutes",
		"never when capacity does not exceed arrival",
		"the wait of a job arriving now (about 120 s behind 12,000 at 100 per second)",
		"caveats: measured capacity under load, retries are arrivals, recompute when rates change",
	}},
}
