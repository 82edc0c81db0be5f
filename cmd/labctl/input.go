package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
)

type inputKey struct{}

// withInput makes commands run with ctx read their answers (reset's
// question, interview's prompts, watch's keys) from r instead of the
// standard input; tests use it.
func withInput(ctx context.Context, r io.Reader) context.Context {
	return context.WithValue(ctx, inputKey{}, r)
}

// input is where a command reads what the user types.
func input(ctx context.Context) io.Reader {
	if r, ok := ctx.Value(inputKey{}).(io.Reader); ok {
		return r
	}
	return os.Stdin
}

// confirm asks a yes/no question on stdout and reads the answer from in;
// only "y" or "yes" is yes.
func confirm(in *bufio.Reader, out io.Writer, question string) bool {
	io.WriteString(out, question+" [y/N] ")
	line, _ := in.ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}
