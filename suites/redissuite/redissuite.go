// Package redissuite is the conformance suite of lab 02 (a durable claim
// store on Redis SET NX). Run checks any implementation of Store; the lab's
// test file, the reference solution's test file and the grader all call it
// the same way, through a small adapter that builds the lab's own Options:
//
//	func TestRedis(t *testing.T) {
//		redissuite.Run(t, func(rdb redis.UniversalClient, o redissuite.Options) redissuite.Store[Claim, Record] {
//			return New(rdb, Options{Prefix: o.Prefix, ClaimTTL: o.ClaimTTL, Retention: o.Retention})
//		}, redissuite.Errors{...})
//	}
//
// By default every case runs against an in-process miniredis on virtual time
// (fakeclock), so a 24-hour retention window passes in microseconds. When the
// environment variable REDIS_ADDR names a real server (host:port or a
// redis:// URL), the same cases run against it with short real TTLs; every key
// a run writes lives under a unique "labkit:test:" prefix and is deleted
// afterwards, and the suite refuses to touch a database that holds keys
// outside "labkit:" unless LABKIT_REDIS_ALLOW_FOREIGN_KEYS=1.
package redissuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/redisaddr"
	"github.com/fourth-outcome/labkit/suites"
)

// Store is what lab 02 builds: an idempotency store whose records live in
// Redis. C is the lab's claim type (what the winner of a key holds) and R its
// record type (what Claim reports about a completed key).
type Store[C, R any] interface {
	// Claim claims key for tenant on behalf of a request with the given
	// fingerprint. A nil error with a zero R means the caller holds the
	// claim C and must Complete or Release it.
	Claim(ctx context.Context, tenant, key, fingerprint string) (C, R, error)
	// Complete stores result under the claim, if the claim is still held.
	Complete(ctx context.Context, c C, result string) error
	// Release gives the claim up, if it is still held.
	Release(ctx context.Context, c C) error
	// Do claims, runs work at most once and completes or releases.
	Do(ctx context.Context, tenant, key, fingerprint string, work func(ctx context.Context) (string, error)) (string, error)
}

// Options is what the suite asks of a store it constructs: where its keys
// live and how long claims and results last. The lab's adapter copies it
// into the lab's own Options.
type Options struct {
	Prefix    string        // every key the store writes starts with Prefix
	ClaimTTL  time.Duration // a pending claim expires after this long
	Retention time.Duration // a completed record is kept this long
}

// Errors are the lab's sentinel errors, which the suite matches with
// errors.Is.
type Errors struct {
	InProgress          error // a duplicate of a pending claim
	FingerprintMismatch error // a key reused with a different request
	InvalidKey          error // an empty, oversized or NUL-containing tenant or key
	ClaimLost           error // Complete or Release by a caller whose claim is gone
}

// Environment variables that point the suite at a real Redis server.
const (
	// AddrEnv names the server: "127.0.0.1:6379" or "redis://host:port/db".
	AddrEnv = redisaddr.Env
	// AllowForeignEnv, set to 1, lets the suite run against a database that
	// holds keys outside "labkit:". The suite only ever deletes its own keys.
	AllowForeignEnv = redisaddr.AllowForeignEnv
)

// Run runs lab 02's suite. newStore must return a new store object on the
// given client each time it is called (the suite calls it once per simulated
// process, so two stores on one server are two processes); errs holds the
// lab's sentinel errors.
//
// Without REDIS_ADDR the cases run on an embedded miniredis on virtual time.
// With it they run against that server; Run fails at once, with one line,
// when the server cannot be reached or holds keys outside "labkit:".
func Run[C, R any](t *testing.T, newStore func(rdb redis.UniversalClient, o Options) Store[C, R], errs Errors) {
	t.Helper()
	if newStore == nil {
		t.Fatal("redissuite.Run: newStore is nil")
	}
	if err := errs.check(); err != nil {
		t.Fatal(err)
	}
	tg := &target{
		newStore: func(rdb redis.UniversalClient, o Options) store { return erased[C, R]{newStore(rdb, o)} },
		errs:     errs,
	}
	addr := os.Getenv(AddrEnv)
	if addr == "" {
		suites.Run(t, Lab, tests, tg.simulatedEnv)
		return
	}
	srv, err := connectReal(addr, os.Getenv(AllowForeignEnv) == "1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.close)
	suites.RunRealTime(t, Lab, tests, func(t *testing.T, h *suites.History) *env { return srv.newEnv(t, h, tg) })
}

func (e Errors) check() error {
	var missing []string
	for name, err := range map[string]error{
		"InProgress": e.InProgress, "FingerprintMismatch": e.FingerprintMismatch,
		"InvalidKey": e.InvalidKey, "ClaimLost": e.ClaimLost,
	} {
		if err == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("redissuite.Run: Errors.%v is nil; pass the lab's sentinel errors", missing)
	}
	distinct := map[error]bool{}
	for _, err := range []error{e.InProgress, e.FingerprintMismatch, e.InvalidKey, e.ClaimLost} {
		if distinct[err] {
			return errors.New("redissuite.Run: two of the sentinel errors are the same value; each outcome needs its own")
		}
		distinct[err] = true
	}
	return nil
}
