package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Terminal is the pane the terminal journey runs in: a laptop's terminal,
// and the 50 rows the one-screen feedback is laid out to fit.
const (
	paneCols = 120
	paneRows = 50
)

// exitLineRE matches the line the journey's shell prints after each
// command: "[exit 1]".
var exitLineRE = regexp.MustCompile(`(?m)^\[exit (\d+)\]\s*$`)

// TestLearnerJourneyOnATerminal follows the journey of TestLearnerJourney
// where a learner sees it: labctl built as a binary and run by a shell in a
// real terminal (a tmux pane of 120 columns and 50 rows), so that what is
// tested is what the terminal shows (the terminal's width, colour only on
// a terminal, one screen). The screen after each command, with durations
// and paths normalised, is testdata/journey-term.txt; after a failing
// check the screen must still hold, without scrolling, the score, the
// diagnosis and the next step.
func TestLearnerJourneyOnATerminal(t *testing.T) {
	skipJourney(t)
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("needs tmux, which runs labctl in a real terminal (apt-get install tmux; .ci/run installs it)")
	}
	lab, kit := journeyKit(t)
	// As the README's "build it once" recipe does: bin/labctl in the
	// kit, so that the commands the feedback shows are the same on every
	// machine (the binary's path decides where long lines wrap).
	const bin = "bin/labctl"
	build := exec.Command("go", "build", "-o", filepath.Join(kit, "bin", "labctl"), "./cmd/labctl")
	build.Dir = kitRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/labctl: %v\n%s", err, out)
	}

	// A tmux server of this test's own, on its own socket, with no
	// configuration file, its shell started in the kit.
	sock := "labkit-journey-" + strconv.Itoa(os.Getpid())
	tm := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(tmux, append([]string{"-f", "/dev/null", "-L", sock}, args...)...)
		cmd.Env = append(os.Environ(), "NO_COLOR=", "PS1=$ ")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	tm("new-session", "-d", "-s", "journey", "-x", strconv.Itoa(paneCols), "-y", strconv.Itoa(paneRows), "-c", kit, "sh")
	t.Cleanup(func() { exec.Command(tmux, "-f", "/dev/null", "-L", sock, "kill-server").Run() })

	var tr strings.Builder
	step := func(note string, args ...string) (screen string, code int) {
		t.Helper()
		tm("clear-history", "-t", "journey")
		// The shell clears the screen first, so that the pane shows only
		// this command's output; "[exit" and "$?]" are two words so that
		// the command line itself never matches exitLineRE.
		line := fmt.Sprintf(`printf '\033[H\033[2J'; %s %s; echo "[exit" "$?]"`, bin, strings.Join(args, " "))
		tm("send-keys", "-t", "journey", "-l", line)
		tm("send-keys", "-t", "journey", "Enter")
		deadline := time.Now().Add(10 * time.Minute)
		for {
			screen = tm("capture-pane", "-p", "-t", "journey")
			if m := exitLineRE.FindStringSubmatch(screen); m != nil {
				code, _ = strconv.Atoi(m[1])
				screen = strings.TrimRight(exitLineRE.ReplaceAllString(screen, ""), "\n ")
				// The shell's prompt, "$ " or root's "# ", after the output.
				screen = strings.TrimRight(strings.TrimSuffix(strings.TrimSuffix(screen, "$"), "#"), "\n ")
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("labctl %s: no exit after 10 minutes; the pane shows:\n%s", strings.Join(args, " "), screen)
			}
			time.Sleep(200 * time.Millisecond)
		}
		lines := strings.Split(screen, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRight(l, " ")
		}
		screen = strings.Join(lines, "\n")
		fmt.Fprintf(&tr, "## %s\n$ %s %s\n%s\n", note, bin, strings.Join(args, " "), screen)
		if code != 0 {
			fmt.Fprintf(&tr, "[exit %d]\n", code)
		}
		tr.WriteString("\n")
		return screen, code
	}

	step("a new student checks the first lab before writing anything", "check")
	putTarget(t, kit, lab.Lab, "timeout-keeps-claim")
	screen, code := step("writes a first attempt that keeps a key whose work failed with a context error", "check")
	if code != 1 {
		t.Errorf("check on timeout-keeps-claim: exit %d, want 1", code)
	}
	for what, want := range map[string]string{
		"the score":     "82/100",
		"the diagnosis": "This looks like a known mistake",
		"the next step": "Next: Fix failed_execution_releases_key",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("check on timeout-keeps-claim in a %d-row terminal: the screen lacks %s (%q):\n%s", paneRows, what, want, screen)
		}
	}
	if !strings.HasPrefix(screen, "Lab 01 ") {
		t.Errorf("check on timeout-keeps-claim: the screen does not start with the lab's heading (it scrolled off):\n%s", screen)
	}
	putTarget(t, kit, lab.Lab, "solution")
	if _, code := step("fixes it", "check"); code != 0 {
		t.Errorf("check on the solution: exit %d, want 0", code)
	}

	got := strings.ReplaceAll(tr.String(), kit, "$KIT")
	compareGolden(t, filepath.Join("testdata", "journey-term.txt"), got)
}
