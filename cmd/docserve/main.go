// Command docserve serves a directory, the course's web site that `labctl
// docs` builds, over HTTP until it is interrupted. `labctl docs --serve`
// builds and runs it, so that labctl itself links no HTTP server (a fresh
// clone's first build of labctl is the wait before a learner's first
// verdict).
//
// Usage:
//
//	docserve [--addr HOST:PORT] DIR
//
// main only maps errors to exit codes; run does the work.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintf(os.Stderr, "docserve: %v\n", err)
		os.Exit(2)
	}
}

// run serves the directory named in args until ctx ends. It writes the
// address it serves at to stdout once it listens, and a note to stderr when
// that address is reachable from other machines.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("docserve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to serve on (loopback by default; port 0 picks a free one)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: docserve [--addr HOST:PORT] DIR\n\nDocserve serves DIR over HTTP until interrupted.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("want one directory to serve (usage: docserve [--addr HOST:PORT] DIR)")
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", *addr, err)
	}
	if host, _, _ := net.SplitHostPort(*addr); host != "" {
		if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
			fmt.Fprintf(stderr, "note: serving on %s, which is reachable from other machines\n", *addr)
		}
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "serving the course at http://%s/ (Ctrl-C stops)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
		return nil
	case err := <-errc:
		return err
	}
}
