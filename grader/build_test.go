package grader

import (
	"context"
	"errors"
	"testing"
)

func TestBuildRetrying(t *testing.T) {
	cache := []string{"# example/labs/01-claim", `labs/01-claim/claim.go:4:2: could not import sync (open /root/.cache/go-build/ab/cd-d: no such file or directory)`}
	code := []string{"labs/01-claim/claim.go:12:9: undefined: errInProgress"}
	for _, tt := range []struct {
		name    string
		builds  [][]string // each build's output, nil for a build that succeeded
		want    []string
		wantErr error
		calls   int
	}{
		{"builds", [][]string{nil}, nil, nil, 1},
		{"the code does not compile", [][]string{code}, code, nil, 1},
		{"the cache fails once", [][]string{cache, nil}, nil, nil, 2},
		{"the cache fails, then the code", [][]string{cache, code}, code, nil, 2},
		{"the cache fails twice", [][]string{cache, cache}, nil, ErrBuildEnvironment, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			got, err := buildRetrying(context.Background(), func() ([]string, error) {
				calls++
				return tt.builds[calls-1], nil
			})
			if !errors.Is(err, tt.wantErr) || len(got) != len(tt.want) || calls != tt.calls {
				t.Errorf("buildRetrying() = %q, %v after %d builds, want %q, %v after %d", got, err, calls, tt.want, tt.wantErr, tt.calls)
			}
		})
	}
}
