package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServes: the directory's files come back over HTTP at the address
// printed, and the server stops when its context ends.
func TestServes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>course</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--addr", "127.0.0.1:0", dir}, pw, io.Discard); pw.Close() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the first line: %v", err)
	}
	go io.Copy(io.Discard, pr)
	url := strings.Fields(strings.TrimPrefix(line, "serving the course at "))[0]
	resp, err := http.Get(url + "index.html")
	if err != nil {
		t.Fatalf("GET %sindex.html: %v", url, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "<h1>course</h1>" {
		t.Errorf("GET index.html = %d %q, want 200 %q", resp.StatusCode, body, "<h1>course</h1>")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run after cancel = %v, want nil", err)
	}
}

// TestBadInput: a missing directory, two directories and an address in use
// are one-line errors.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{}, {dir, dir}, {filepath.Join(dir, "missing")}, {"--addr", "no-port", dir}} {
		err := run(context.Background(), args, io.Discard, io.Discard)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("run(%q) = %v, want a one-line error", args, err)
		}
	}
}
