package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/site"
)

type docsOpts struct {
	out   string
	serve bool
	addr  string
}

var docsCmd = &command{
	name:  "docs",
	usage: "[--out DIR] [--serve [--addr HOST:PORT]]",
	short: "build the course as a web site (docs/*.md and the exercises), or serve it",
	long: `
Docs builds the course as a static web site in DIR (default .labkit/docs):
every chapter followed by its lab's exercise, the interview practice, the
glossary, further reading and the guides, with a contents page
(DIR/index.html), previous and next links, and a link on every heading.
Figures referenced as ![TITLE](figures/NAME.svg) are drawn inline from
their sources in docs/figures (see docs/figures/README.md). It then checks that every link and anchor of the site resolves (exit 1 if not).

With --serve it serves the site over HTTP at --addr (loopback by default)
until interrupted.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &docsOpts{}
		fs.StringVar(&o.out, "out", "", "directory for the site (default .labkit/docs in the kit)")
		fs.BoolVar(&o.serve, "serve", false, "serve the site over HTTP until interrupted")
		fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to serve on with --serve (loopback by default; port 0 picks a free one)")
		return func(ctx context.Context, e *env, args []string) error { return runDocs(ctx, e, o, args) }
	},
}

func runDocs(ctx context.Context, e *env, o *docsOpts, args []string) error {
	if len(args) > 0 {
		return usagef("docs takes no arguments (use --out DIR)")
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	out := o.out
	if out == "" {
		out = filepath.Join(root, ".labkit", "docs")
	}
	res, err := site.Build(site.Config{Root: root, Out: out})
	if errors.Is(err, site.ErrNoDocs) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	st, err := site.CheckLinks(out)
	if err != nil {
		fmt.Fprintf(e.stderr, "labctl docs: %v\n", err)
		return errFailed
	}
	figures := 0
	for _, p := range res.Pages {
		figures += len(p.Figures)
	}
	fmt.Fprintf(e.stdout, "built %d pages with %d figures in %s (start at %s); %d links and %d anchors resolve\n",
		len(res.Pages)+1, figures, out, filepath.Join(out, "index.html"), st.Internal, st.Anchors)
	if !o.serve {
		return nil
	}
	return serveSite(ctx, e, root, out, o.addr)
}

// serveSite serves dir at addr until ctx ends, with the kit's own server,
// cmd/docserve, built into .labkit/bin: labctl links no HTTP server, which
// would add a quarter of its first build on a fresh clone, the wait before
// a learner's first verdict. labctl listens on addr first, so that a bad or
// busy address is its own one-line error (exit 2), and hands docserve the
// port it got.
func serveSite(ctx context.Context, e *env, root, dir, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usagef("--addr %s: %v", addr, err)
	}
	addr = ln.Addr().String() // the port it got, when addr asked for 0
	ln.Close()
	bin := filepath.Join(root, ".labkit", "bin", "docserve")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	fmt.Fprintln(e.stderr, "building the web server (its first build takes about half a minute)...")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/docserve")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("building cmd/docserve: %v\n%s", err, strings.TrimSpace(string(out)))
	}
	srv := exec.CommandContext(ctx, bin, "--addr", addr, dir)
	srv.Stdout, srv.Stderr = e.stdout, e.stderr
	srv.Cancel = func() error {
		if runtime.GOOS == "windows" {
			return srv.Process.Kill()
		}
		return srv.Process.Signal(os.Interrupt)
	}
	srv.WaitDelay = 5 * time.Second
	if err := srv.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w (the web server stopped: %v)", errFailed, err)
	}
	return nil
}
