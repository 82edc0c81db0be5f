package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/fourth-outcome/labkit/ops/opscmd"
)

// call runs the command line and returns its exit status and output.
func call(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return opscmd.ExitCode("enginebench", err, &errb), out.String(), errb.String()
}

// TestBenchRunsBothSystems proves only that the bench works end to end, on
// a tiny job count: its numbers mean nothing here. It runs on miniredis,
// or on the server REDIS_ADDR names (whose db should serve nothing else).
func TestBenchRunsBothSystems(t *testing.T) {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		addr = miniredis.RunT(t).Addr()
	}
	code, out, errs := call("--redis", addr, "--jobs", "50", "--runs", "1", "--workers", "3", "--timeout", "1m")
	if code != 0 {
		t.Fatalf("enginebench: exit %d, %s\n%s", code, errs, out)
	}
	for _, want := range []string{
		`(?m)^  engine +\d+ +\S+ +\S+ +\S+ +\d+\.\d\d$`,
		`(?m)^  asynq +\d+ +\S+ +\S+ +\S+ +\d+\.\d\d$`,
		`engine/asynq: throughput \d+\.\d\dx`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("enginebench printed\n%s\nwant a line matching %s", out, want)
		}
	}
}

func TestBadUsageExits2(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--redis", "127.0.0.1:1", "--jobs", "0"},
		{"--redis", "127.0.0.1:1", "--workers", "0"},
		{"--redis", "127.0.0.1:1", "--runs", "0"},
		{"--redis", "127.0.0.1:1", "--only", "sidekiq"},
		{"--redis", "127.0.0.1:1", "extra"},
		{"--nope"},
	} {
		code, _, errs := call(args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.HasPrefix(errs, "enginebench: ") {
			t.Errorf("enginebench %q: exit %d, stderr %q; want exit 2 and one line", args, code, errs)
		}
	}
}

func TestHelpExits0(t *testing.T) {
	code, out, _ := call("--help")
	if code != 0 || !strings.Contains(out, "Full kit only") || !strings.Contains(out, "-redis") {
		t.Errorf("enginebench --help: exit %d, %q", code, out)
	}
}

func TestPercentileAndMedian(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if p50, p99 := percentile(d, 0.5), percentile(d, 0.99); p50 != 50 || p99 != 99 {
		t.Errorf("percentile(1..100) p50 %d p99 %d; want 50, 99", p50, p99)
	}
	m := median([]result{{perSec: 3, p50: 9}, {perSec: 1, p50: 7}, {perSec: 2, p50: 8}})
	if m.perSec != 2 || m.p50 != 8 {
		t.Errorf("median = %+v; want perSec 2, p50 8", m)
	}
	if jobIndex(jobID(42)) != 42 || jobIndex("x") != -1 {
		t.Errorf("jobIndex(jobID(42)) = %d", jobIndex(jobID(42)))
	}
}
