// Command claimbench measures how many claims per second the reference
// store of lab 02 makes against a real Redis server, with a number of
// concurrent clients, so that .ci/bench-redis.sh can compare it with
// redis-benchmark's raw SET rate on the same server.
//
//	go run ./solutions/02-redis/internal/claimbench -addr 127.0.0.1:6390 -clients 50 -n 100000
//
// Every claim is on a new key, so each is one SET ... NX PX round trip, the
// same work redis-benchmark's SET test asks of the server. With -op do, each
// operation is a whole Do (claim, work, complete script): two round trips.
// The keys live under a random "labkit:bench:" prefix and are deleted at
// the end.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	redisclaim "github.com/fourth-outcome/labkit/solutions/02-redis"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "Redis server address")
	clients := flag.Int("clients", 50, "concurrent clients (goroutines, and connections in the pool)")
	n := flag.Int("n", 100000, "operations to run")
	op := flag.String("op", "claim", "what to measure: claim (one SET NX PX) or do (claim, then complete)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured run to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "claimbench:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "claimbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*addr, *clients, *n, *op); err != nil {
		fmt.Fprintln(os.Stderr, "claimbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(addr string, clients, n int, op string) error {
	if op != "claim" && op != "do" {
		return fmt.Errorf("-op %q: want claim or do", op)
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{
		Addr:         addr,
		PoolSize:     clients,
		MinIdleConns: clients,
		DialTimeout:  time.Second,
		ReadTimeout:  2 * time.Second,
		WriteTimeout: 2 * time.Second,
	})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s: %w", addr, err)
	}
	prefix := "labkit:bench:" + rand.Text()[:10] + ":"
	defer func() {
		if err := deletePrefix(rdb, prefix); err != nil {
			fmt.Fprintln(os.Stderr, "claimbench: cleanup:", err)
		}
	}()
	store := redisclaim.New(rdb, redisclaim.Options{Prefix: prefix, ClaimTTL: time.Minute, Retention: time.Minute})

	one := func(i int64) error {
		key := strconv.FormatInt(i, 10)
		if op == "claim" {
			_, _, err := store.Claim(ctx, "bench", key, "fp")
			return err
		}
		_, err := store.Do(ctx, "bench", key, "fp", func(context.Context) (string, error) { return "ok", nil })
		return err
	}
	// Warm up: open every connection and load the scripts.
	if _, err := measure(clients, int64(10*clients), -int64(10*clients)-1, one); err != nil {
		return err
	}
	elapsed, err := measure(clients, int64(n), 0, one)
	if err != nil {
		return err
	}
	fmt.Printf("%s/s %.0f (%d ops, %d clients, %v)\n", op, float64(n)/elapsed.Seconds(), n, clients, elapsed.Round(time.Millisecond))
	return nil
}

// measure runs total operations on clients goroutines, numbering them from
// first+1, and returns the wall time they took.
func measure(clients int, total, first int64, one func(int64) error) (time.Duration, error) {
	var next atomic.Int64
	next.Store(first)
	last := first + total
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > last {
					return
				}
				if err := one(i); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start), firstErr
}

func deletePrefix(rdb *redis.Client, prefix string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			if err := rdb.Unlink(ctx, batch...).Err(); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return rdb.Unlink(ctx, batch...).Err()
	}
	return errors.Join()
}
