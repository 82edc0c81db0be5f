package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/ops/engineview"
	"github.com/fourth-outcome/labkit/ops/opscmd"
)

// call runs the command line and returns its exit status and output.
func call(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return opscmd.ExitCode("enginedemo", err, &errb), out.String(), errb.String()
}

// TestDemoFinishesEveryJob: every job the demo submits ends done or dead,
// and the view reads what the demo says it did.
func TestDemoFinishesEveryJob(t *testing.T) {
	m := miniredis.RunT(t)
	code, out, errs := call("--redis", m.Addr(), "--jobs", "12", "--rate", "200", "--step-time", "0",
		"--workers", "3", "--invalid", "0.25", "--crash", "0.1", "--visibility", "200ms", "--seed", "3", "--duration", "2m")
	if code != 0 {
		t.Fatalf("enginedemo: exit %d, %s", code, errs)
	}
	sum := regexp.MustCompile(`12 jobs submitted \(\d+ refused as full and retried\): (\d+) done, (\d+) dead, 0 unfinished`).FindStringSubmatch(out)
	if sum == nil {
		t.Fatalf("enginedemo printed\n%s\nwant a summary of 12 jobs, none unfinished", out)
	}
	rdb := goredis.NewClient(&goredis.Options{Addr: m.Addr()})
	defer rdb.Close()
	s, err := engineview.Read(context.Background(), rdb, "labkit:demo")
	if err != nil {
		t.Fatalf("Read(labkit:demo): %v", err)
	}
	if got := s.Done + s.Dead; got != 12 || s.Unfinished() != 0 {
		t.Errorf("Read(labkit:demo).Done+Dead = %d, unfinished %d; want 12, 0", got, s.Unfinished())
	}
	if !strings.Contains(out, "done, "+strconv.Itoa(s.Dead)+" dead") {
		t.Errorf("enginedemo's summary %q disagrees with Read(labkit:demo).Dead = %d", sum[0], s.Dead)
	}
}

func TestDemoRefusesANamespaceWithKeys(t *testing.T) {
	m := miniredis.RunT(t)
	m.Set("labkit:demo:token", "7")
	code, _, errs := call("--redis", m.Addr(), "--jobs", "1")
	if code != 2 || !strings.Contains(errs, "pass --reset") {
		t.Errorf("enginedemo on a namespace with keys: exit %d, %q; want exit 2 and --reset named", code, errs)
	}
	code, _, errs = call("--redis", m.Addr(), "--jobs", "1", "--rate", "100", "--step-time", "0", "--reset", "--faults", "0", "--crash", "0", "--invalid", "0")
	if code != 0 {
		t.Errorf("enginedemo --reset: exit %d, %s", code, errs)
	}
}

func TestDemoBadInputIsExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "0"}, "--workers 0"},
		{[]string{"--faults", "2"}, "want probabilities"},
		{[]string{"--rate", "0"}, "--rate 0"},
		{[]string{"--jobs", "0"}, "runs for ever"},
		{[]string{"--redis", "nohost"}, "has no port"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := call(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("enginedemo %q: exit %d, %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
