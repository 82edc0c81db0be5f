package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLabctlLinksNoSuite keeps labctl lean: it reads each lab's rubric from
// course's data, so it must not link a suite, the testing package, or the
// embedded Redis the suites run on. Linking them made labctl a 34 MB
// binary that a newcomer's first go run spent a minute and a half building.
func TestLabctlLinksNoSuite(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case pkg == "testing", strings.HasPrefix(pkg, "testing/"),
			strings.HasPrefix(pkg, "github.com/alicebob/miniredis/"),
			pkg == "github.com/fourth-outcome/labkit/suites", strings.HasPrefix(pkg, "github.com/fourth-outcome/labkit/suites/"):
			t.Errorf("labctl links %s; it must link no suite, no testing and no miniredis", pkg)
		case pkg == "net/http", pkg == "crypto/tls", strings.HasPrefix(pkg, "github.com/redis/go-redis/"):
			// Half of the standard library a cold build of labctl
			// compiled, for a Redis client that pinged a server and a
			// web server that `docs --serve` now builds apart
			// (cmd/docserve).
			t.Errorf("labctl links %s; it must link no HTTP server, no TLS and no Redis client (redisaddr speaks RESP itself)", pkg)
		}
	}
}
