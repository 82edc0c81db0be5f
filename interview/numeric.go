package interview

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Numeric is a drill with one number for an answer.
type Numeric struct {
	Kind   string
	Prompt string
	Answer float64 // math.Inf(1) for "never"
	Unit   string
	Steps  []string // the worked solution
}

// Kinds of numeric drill, in the order labctl offers them.
var Kinds = []string{"backlog-growth", "recovery-time", "retry-amplification", "full-jitter"}

// Tolerance is the relative error a typed answer may have (rounding).
const Tolerance = 0.01

// NewNumeric generates a drill of kind from seed; the same seed gives the
// same drill.
func NewNumeric(kind string, seed uint64) (Numeric, error) {
	r := rand.New(rand.NewPCG(seed, 0x1abc17))
	switch kind {
	case "backlog-growth":
		capacity := 50 + 10*r.IntN(20)
		arrival := capacity + 5*(1+r.IntN(8))
		minutes := 10 * (1 + r.IntN(12))
		growth := arrival - capacity
		total := growth * 60 * minutes
		return Numeric{Kind: kind, Unit: "jobs",
			Prompt: fmt.Sprintf("Jobs arrive at %d per second; the workers sustain %d per second. The backlog starts empty. How many jobs are waiting after %d minutes?", arrival, capacity, minutes),
			Answer: float64(total),
			Steps: []string{
				fmt.Sprintf("growth = arrival - capacity = %d - %d = %d jobs per second", arrival, capacity, growth),
				fmt.Sprintf("%d minutes = %d seconds", minutes, 60*minutes),
				fmt.Sprintf("backlog = %d × %d = %d jobs; it keeps growing until arrivals fall or capacity rises", growth, 60*minutes, total),
			}}, nil
	case "recovery-time":
		backlog := 1000 * (2 + r.IntN(40))
		capacity := 50 + 10*r.IntN(20)
		arrival := capacity - 5*r.IntN(8)
		n := Numeric{Kind: kind, Unit: "seconds",
			Prompt: fmt.Sprintf("The backlog is %d jobs. New work arrives at %d per second and the workers verifiably process %d per second. In how many seconds is the backlog gone? (type never if it never drains)", backlog, arrival, capacity)}
		drain := capacity - arrival
		if drain <= 0 {
			n.Answer = math.Inf(1)
			n.Steps = []string{
				fmt.Sprintf("only capacity minus arrival drains the backlog: %d - %d = %d", capacity, arrival, drain),
				"capacity does not exceed arrival, so the backlog never drains: shed load or raise capacity",
			}
			return n, nil
		}
		n.Answer = float64(backlog) / float64(drain)
		n.Steps = []string{
			fmt.Sprintf("only capacity minus arrival drains the backlog: %d - %d = %d jobs per second", capacity, arrival, drain),
			fmt.Sprintf("recovery time = backlog / drain rate = %d / %d = %s seconds (%s minutes)", backlog, drain, num(n.Answer), num(n.Answer/60)),
			fmt.Sprintf("not %d / %d = %s s: that ignores the work that keeps arriving", backlog, capacity, num(float64(backlog)/float64(capacity))),
		}
		return n, nil
	case "retry-amplification":
		layers := 2 + r.IntN(3)
		attempts := 2 + r.IntN(4)
		calls := 1
		var factors []string
		for range layers {
			calls *= attempts
			factors = append(factors, strconv.Itoa(attempts))
		}
		return Numeric{Kind: kind, Unit: "calls",
			Prompt: fmt.Sprintf("A request passes through %d layers (gateway, service, client library...). Each layer makes up to %d attempts (the first try and %d retries) when the layer below fails. The bottom dependency is down. How many calls reach it for one user request?", layers, attempts, attempts-1),
			Answer: float64(calls),
			Steps: []string{
				fmt.Sprintf("each attempt of a layer makes up to %d attempts in the layer below, so the counts multiply", attempts),
				fmt.Sprintf("%s = %d calls to a dependency that is already down", strings.Join(factors, " × "), calls),
				"retry at one layer only, with a budget, and the bottom sees at most the attempts of that one layer",
			}}, nil
	case "full-jitter":
		base := []int{50, 100, 200, 250}[r.IntN(4)]
		cap := 1000 * (2 + r.IntN(9))
		attempt := 1 + r.IntN(8)
		exp := base << attempt
		bound := min(cap, exp)
		return Numeric{Kind: kind, Unit: "ms",
			Prompt: fmt.Sprintf("Backoff with full jitter: sleep = random between 0 and min(cap, base × 2^attempt), base %d ms, cap %d ms. What is the longest the client can sleep before retry attempt %d (attempt counts from 0)?", base, cap, attempt),
			Answer: float64(bound),
			Steps: []string{
				fmt.Sprintf("base × 2^attempt = %d × 2^%d = %d ms", base, attempt, exp),
				fmt.Sprintf("capped: min(%d, %d) = %d ms", cap, exp, bound),
				fmt.Sprintf("full jitter draws uniformly from [0, %d] ms: the mean is %s ms, and clients that failed together spread out instead of retrying together", bound, num(float64(bound)/2)),
			}}, nil
	}
	return Numeric{}, fmt.Errorf("unknown numeric drill %q (known: %s)", kind, strings.Join(Kinds, ", "))
}

// Check compares a typed answer with the drill's, within Tolerance;
// "never" (or "inf") is the answer to a backlog that never drains. A
// typed number may have thousands separators and a unit word after it
// ("6400 ms", "800 seconds"), and is read in the drill's unit. When the
// drill's unit is one of time, a duration with its own units ("6.4s",
// "13m20s", "13 min 20 s") is converted to it.
func (n Numeric) Check(typed string) (ok bool, err error) {
	t := strings.ToLower(strings.TrimSpace(typed))
	if t == "never" || t == "inf" || t == "infinite" || t == "∞" {
		return math.IsInf(n.Answer, 1), nil
	}
	v, ok := n.value(t)
	if !ok {
		return false, fmt.Errorf("%q is not a number", strings.TrimSpace(typed))
	}
	if math.IsInf(n.Answer, 1) {
		return false, nil
	}
	return math.Abs(v-n.Answer) <= Tolerance*math.Max(1, math.Abs(n.Answer)), nil
}

// timeUnits are the drill units of time, as durations.
var timeUnits = map[string]time.Duration{"seconds": time.Second, "ms": time.Millisecond}

// unitWords shortens the words of time units to time.ParseDuration's;
// longer words come first, so "milliseconds" is not read as "m" and more.
var unitWords = strings.NewReplacer(
	"milliseconds", "ms", "millisecond", "ms", "msecs", "ms", "msec", "ms",
	"minutes", "m", "minute", "m", "mins", "m", "min", "m",
	"seconds", "s", "second", "s", "secs", "s", "sec", "s",
	"hours", "h", "hour", "h", "hrs", "h", "hr", "h",
)

// numberRE is a number followed by a unit word, if any, with no spaces.
var numberRE = regexp.MustCompile(`^([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[-+]?[0-9]+)?)[a-z]*$`)

// value reads the lower-cased answer t as a number in the drill's unit.
func (n Numeric) value(t string) (float64, bool) {
	t = strings.Join(strings.Fields(strings.NewReplacer(",", "", "_", "").Replace(t)), "")
	if per, ok := timeUnits[n.Unit]; ok {
		if d, err := time.ParseDuration(unitWords.Replace(t)); err == nil {
			return float64(d) / float64(per), true
		}
	}
	m := numberRE.FindStringSubmatch(t)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// AnswerText is the answer as a learner would write it.
func (n Numeric) AnswerText() string {
	if math.IsInf(n.Answer, 1) {
		return "never"
	}
	return num(n.Answer) + " " + n.Unit
}

func num(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
