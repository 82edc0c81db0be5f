package grader

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/ambiguoussuite"
	"github.com/fourth-outcome/labkit/suites/claimsuite"
	"github.com/fourth-outcome/labkit/suites/redissuite"
	"github.com/fourth-outcome/labkit/suites/retrysuite"
)

// Lab is one lab of the course as the grader sees it: the suite's rubric,
// where the lab lives, and the pristine test shim that is overlaid on every
// run.
type Lab struct {
	suites.Lab
	Dir        string // directory name under labs/ and solutions/, "01-claim"
	Package    string // Go package name, "claim"
	TestFile   string // the shim's file name, "claim_test.go"
	TestSource string // the shim's pristine contents
}

// Catalog lists every lab in course order.
var Catalog = []Lab{
	{
		Lab:      claimsuite.Lab,
		Dir:      "01-claim",
		Package:  "claim",
		TestFile: "claim_test.go",
		TestSource: `package claim

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites/claimsuite"
)

// TestClaim runs the lab's conformance suite. The grader replaces this file
// with its own pristine copy, so editing it changes nothing in labctl check.
func TestClaim(t *testing.T) {
	claimsuite.Run(t, New, ErrInProgress)
}
`,
	},
	{
		Lab:      redissuite.Lab,
		Dir:      "02-redis",
		Package:  "redisclaim",
		TestFile: "redis_test.go",
		TestSource: `package redisclaim

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/suites/redissuite"
)

// TestRedis runs the lab's conformance suite, on an embedded Redis by default
// and on the server named by REDIS_ADDR when it is set. The grader replaces
// this file with its own pristine copy, so editing it changes nothing in
// labctl check.
func TestRedis(t *testing.T) {
	redissuite.Run(t, func(rdb redis.UniversalClient, o redissuite.Options) redissuite.Store[Claim, Record] {
		return New(rdb, Options{Prefix: o.Prefix, ClaimTTL: o.ClaimTTL, Retention: o.Retention})
	}, redissuite.Errors{
		InProgress:          ErrInProgress,
		FingerprintMismatch: ErrFingerprintMismatch,
		InvalidKey:          ErrInvalidKey,
		ClaimLost:           ErrClaimLost,
	})
}
`,
	},
	{
		Lab:      ambiguoussuite.Lab,
		Dir:      "03-ambiguous",
		Package:  "ambiguous",
		TestFile: "ambiguous_test.go",
		TestSource: `package ambiguous

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites/ambiguoussuite"
)

// TestAmbiguous runs the lab's conformance suite. The grader replaces this file
// with its own pristine copy, so editing it changes nothing in labctl check.
func TestAmbiguous(t *testing.T) {
	ambiguoussuite.Run(t, New)
}
`,
	},
	{
		Lab:      retrysuite.Lab,
		Dir:      "04-retry",
		Package:  "retry",
		TestFile: "retry_test.go",
		TestSource: `package retry

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites/retrysuite"
)

// TestRetry runs the lab's conformance suite. The grader replaces this file
// with its own pristine copy, so editing it changes nothing in labctl check.
func TestRetry(t *testing.T) {
	retrysuite.Run(t, func(c retrysuite.Config[*Budget]) Policy {
		return Policy{
			MaxAttempts: c.MaxAttempts,
			Base:        c.Base,
			Cap:         c.Cap,
			Timeout:     c.Timeout,
			Rand:        c.Rand,
			Budget:      c.Budget,
		}
	}, NewBudget, ErrBudgetExhausted)
}
`,
	},
	// more labs here, in course order
}

// ErrUnknownLab is returned by FindLab for a name that matches no lab.
var ErrUnknownLab = fmt.Errorf("unknown lab")

// FindLab resolves a lab by number or name: "1", "01", "claim", "01-claim".
func FindLab(name string) (Lab, error) {
	name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSuffix(name, "/"), "labs/"))
	for _, l := range Catalog {
		if n, err := strconv.Atoi(name); err == nil && n == l.Number {
			return l, nil
		}
		if strings.EqualFold(name, l.Slug) || strings.EqualFold(name, l.Dir) {
			return l, nil
		}
	}
	var known []string
	for _, l := range Catalog {
		known = append(known, l.Dir)
	}
	return Lab{}, fmt.Errorf("%w %q (known: %s; a number like 1 or a name like claim also works)", ErrUnknownLab, name, strings.Join(known, ", "))
}
