package claim

// A forgery through the process's own memory, as a student who read the
// public kit would write it with nothing but os and the crypto packages:
// take over standard output, wait for the suite's first signed verdict,
// find the key by scanning this process's writable memory through
// /proc/self/mem for 32 bytes under which that verdict's signature checks,
// then sign every case passed and rewrite the test framing to match. The
// grader's sandbox has no /proc, so the scan never starts and the starter's
// honest failures stand.

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

const attestPrefix = "labkit-attest "

// searched is closed once the key search is over; once a search has
// begun, Do waits for it, so the suite does not finish before the forged
// lines are out.
var (
	searched  = make(chan struct{})
	searching atomic.Bool
)

func waitForSearch() {
	if searching.Load() {
		<-searched
	}
}

func init() {
	out := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	os.Stdout = w
	go forward(r, out)
}

func forward(r, out *os.File) {
	var key []byte
	tried := false
	var held []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, attestPrefix); i >= 0 {
			f := strings.Fields(line[i+len(attestPrefix):])
			if len(f) == 3 && !tried {
				tried = true
				searching.Store(true)
				key = findKey(f[0], f[1], f[2])
				close(searched)
			}
			if key != nil && len(f) == 3 {
				line = line[:i] + attestPrefix + f[0] + " pass " + mac(key, f[0], "pass")
			}
		}
		held = append(held, line)
		if !tried {
			continue // hold the framing back until the key is known
		}
		for _, l := range held {
			if key != nil {
				l = strings.Replace(l, "--- FAIL:", "--- PASS:", 1)
			}
			out.WriteString(l + "\n")
		}
		held = held[:0]
	}
	for _, l := range held {
		out.WriteString(l + "\n")
	}
	if !tried {
		close(searched)
	}
}

func mac(key []byte, test, verdict string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(test + "\x00" + verdict))
	return hex.EncodeToString(m.Sum(nil))
}

// findKey scans the writable mappings of this process, the Go heap first,
// for a 32-byte key under which sig signs test and verdict.
func findKey(test, verdict, sig string) []byte {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		os.Stderr.WriteString("forgery: " + err.Error() + "\n")
		return nil
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		os.Stderr.WriteString("forgery: " + err.Error() + "\n")
		return nil
	}
	defer mem.Close()
	want, _ := hex.DecodeString(sig)
	msg := []byte(test + "\x00" + verdict)
	var heap, other [][2]uint64
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || !strings.HasPrefix(f[1], "rw") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, _ := strconv.ParseUint(lo, 16, 64)
		b, _ := strconv.ParseUint(hi, 16, 64)
		if strings.HasPrefix(lo, "c0") {
			heap = append(heap, [2]uint64{a, b})
		} else {
			other = append(other, [2]uint64{a, b})
		}
	}
	buf := make([]byte, 1<<20)
	budget := uint64(512 << 20)
	for _, m := range append(heap, other...) {
		for at := m[0]; at < m[1] && budget > 0; at += uint64(len(buf)) - 32 {
			n, _ := mem.ReadAt(buf[:min(uint64(len(buf)), m[1]-at)], int64(at))
			budget -= uint64(n)
			for i := 0; i+32 <= n; i += 8 {
				cand := buf[i : i+32]
				if bytes.Count(cand, []byte{0}) > 8 {
					continue
				}
				h := hmac.New(sha256.New, cand)
				h.Write(msg)
				if hmac.Equal(h.Sum(nil), want) {
					os.Stderr.WriteString("forgery: key found\n")
					return bytes.Clone(cand)
				}
			}
		}
	}
	os.Stderr.WriteString("forgery: no key found\n")
	return nil
}
