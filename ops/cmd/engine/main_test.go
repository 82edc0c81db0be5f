package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/ops/opscmd"
	engine "github.com/fourth-outcome/labkit/solutions/10-engine"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// seeded starts miniredis with three jobs of the reference engine in
// namespace ns, one of them leased, and returns its address.
func seeded(tb testing.TB, ns string) string {
	tb.Helper()
	m := miniredis.RunT(tb)
	rdb := goredis.NewClient(&goredis.Options{Addr: m.Addr()})
	tb.Cleanup(func() { rdb.Close() })
	b, err := engine.NewRedis(rdb, ns, engine.Options{})
	if err != nil {
		tb.Fatalf("NewRedis: %v", err)
	}
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := b.Submit(ctx, engine.Job{ID: id, Account: "acct", Steps: []engine.Step{{DocumentID: "d", Recipient: "r@example.com"}}}); err != nil {
			tb.Fatalf("Submit(%s): %v", id, err)
		}
	}
	if _, err := b.Lease(ctx, "w1"); err != nil {
		tb.Fatalf("Lease: %v", err)
	}
	return m.Addr()
}

// call runs the command line and returns its exit status and output.
func call(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	err := run(ctx, args, &out, &errb)
	code = opscmd.ExitCode("engine", err, &errb)
	return code, out.String(), errb.String()
}

func TestStatusPrintsTheNamespace(t *testing.T) {
	addr := seeded(t, "ops:test")
	code, out, errs := call(context.Background(), "status", "--redis", addr, "--namespace", "ops:test", "--window", "0")
	if code != 0 {
		t.Fatalf("engine status: exit %d, %s", code, errs)
	}
	for _, want := range []string{
		"engine      ops:test at ",
		"jobs        3 submitted: 2 queued (0 in backoff), 1 leased (0 ended), 0 done, 0 dead",
		"visible     2, the oldest visible for ",
		"unfinished  by delivery count: 2 jobs after 0, 1 job after 1",
		"drain       not measured",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("engine status printed\n%s\nwant a line with %q", out, want)
		}
	}
	if !regexp.MustCompile(`\(not recorded\) +a +1 +1 +0 +(30|29\.\d)s\n`).MatchString(out) {
		t.Errorf("engine status printed\n%s\nwant job a's lease, token 1, with about 30s left", out)
	}
}

func TestStatusMeasuresTheDrainOverTheWindow(t *testing.T) {
	addr := seeded(t, "ops:test")
	code, out, errs := call(context.Background(), "status", "--redis", addr, "--namespace", "ops:test", "--window", "50ms")
	if code != 0 {
		t.Fatalf("engine status: exit %d, %s", code, errs)
	}
	// Nothing arrives and nothing finishes: the backlog of 3 never drains.
	if !regexp.MustCompile(`drain +never: 3 unfinished, and jobs do not finish faster than they arrive \(0.00/s in, 0.00/s finished over \d+(\.\d+)?m?s\)`).MatchString(out) {
		t.Errorf("engine status --window 50ms printed\n%s\nwant a drain estimate of never", out)
	}
}

func TestStatusWatchRefreshesUntilInterrupted(t *testing.T) {
	addr := seeded(t, "ops:test")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(350*time.Millisecond, cancel) // an interrupt
	code, out, errs := call(ctx, "status", "--redis", addr, "--namespace", "ops:test", "--watch", "--interval", "100ms")
	if code != 0 {
		t.Fatalf("engine status --watch: exit %d, %s", code, errs)
	}
	if n := strings.Count(out, "jobs        3 submitted"); n < 2 {
		t.Errorf("engine status --watch printed the status %d times in 350ms at 100ms, want at least 2:\n%s", n, out)
	}
}

func TestMetricsServesTheNumbers(t *testing.T) {
	addr := seeded(t, "ops:test")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"metrics", "--redis", addr, "--namespace", "ops:test", "--listen", "127.0.0.1:0"}, io.Discard, &stderr)
	}()
	var url string
	for deadline := time.Now().Add(5 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		url = regexp.MustCompile(`http://\S+/metrics`).FindString(stderr.String())
	}
	if url == "" {
		t.Fatalf("engine metrics did not say where it serves: %q", stderr.String())
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`labkit_engine_submitted_jobs_total{engine_namespace="ops:test"} 3`,
		`labkit_engine_queued_jobs{engine_namespace="ops:test"} 2`,
		`labkit_engine_leased_jobs{engine_namespace="ops:test"} 1`,
		`labkit_engine_deliveries_total{engine_namespace="ops:test"} 1`,
		`labkit_engine_completions_total{engine_namespace="ops:test"} 0`,
		`labkit_engine_up{engine_namespace="ops:test"} 1`,
		"# TYPE labkit_engine_completion_latency_seconds histogram",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("GET /metrics has no line %q:\n%s", want, body)
		}
	}
	cancel()
	if err := <-done; opscmd.ExitCode("engine", err, io.Discard) != 0 {
		t.Errorf("engine metrics after an interrupt: %v, want exit 0", err)
	}
}

func TestBadInputIsOneLineAndExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "want a command"},
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"demo"}, "go run ./cmd/enginedemo"},
		{[]string{"status", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"status", "extra"}, `unexpected argument "extra"`},
		{[]string{"status", "--redis", "localhost"}, "has no port"},
		{[]string{"status", "--namespace", ""}, "--namespace is empty"},
		{[]string{"status", "--interval", "0s"}, "--interval 0s"},
		{[]string{"status", "--window", "-1s"}, "--window -1s"},
		{[]string{"metrics", "--window", "0"}, "--window 0"},
	} {
		code, _, stderr := call(context.Background(), tc.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != 2 || !strings.Contains(last, tc.want) || !strings.HasPrefix(last, "engine: ") {
			t.Errorf("engine %q: exit %d, last line %q; want exit 2 and a line with %q", tc.args, code, last, tc.want)
		}
	}
}

func TestUnreachableRedisIsExit1(t *testing.T) {
	m := miniredis.RunT(t)
	addr := m.Addr()
	m.Close()
	code, _, stderr := call(context.Background(), "status", "--redis", addr)
	if code != 1 || !strings.Contains(stderr, "cannot reach Redis at "+addr) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("engine status on a closed server: exit %d, %q; want exit 1 and one line saying it cannot reach Redis", code, stderr)
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := call(context.Background(), "--help")
	if code != 0 || !strings.Contains(out, "engine status") || !strings.Contains(out, "never") {
		t.Errorf("engine --help: exit %d, %q; want exit 0 and the usage", code, out)
	}
	code, _, stderr := call(context.Background(), "status", "--help")
	if code != 0 || !strings.Contains(stderr, "-watch") || !strings.Contains(stderr, "-namespace") {
		t.Errorf("engine status --help: exit %d, %q; want exit 0 and the flags", code, stderr)
	}
	if err := run(context.Background(), []string{"status", "-h"}, io.Discard, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("engine status -h = %v, want flag.ErrHelp", err)
	}
}
