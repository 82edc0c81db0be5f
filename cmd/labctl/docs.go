package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
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
	return serveSite(ctx, e, out, o.addr)
}

// serveSite serves dir at addr until ctx ends.
func serveSite(ctx context.Context, e *env, dir, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usagef("--addr %s: %v", addr, err)
	}
	if host, _, _ := net.SplitHostPort(addr); host != "" {
		if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
			fmt.Fprintf(e.stderr, "labctl docs: note: serving on %s, which is reachable from other machines\n", addr)
		}
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stdout, "serving the course at http://%s/ (Ctrl-C stops)\n", ln.Addr())
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
