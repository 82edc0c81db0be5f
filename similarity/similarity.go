// Package similarity finds submissions whose code is near-identical once
// identifiers, literals and formatting are erased, as a hint for a human
// to look at, never as a score. It follows MOSS (Schleimer, Wilkerson and
// Aiken, "Winnowing: local algorithms for document fingerprinting", 2003):
// the Go source is turned into a stream of token kinds by go/scanner
// (every identifier is the same token, every literal of a kind too,
// comments and layout are gone), each run of K tokens is hashed, and of
// every W consecutive hashes the smallest is kept. The code the starter
// already had is left out by removing the starter's own fingerprints.
package similarity

import (
	"go/scanner"
	"go/token"
	"hash/fnv"
	"slices"
	"sort"
)

// K is the length in tokens of a hashed run, and W the winnowing window:
// any shared run of at least K+W-1 tokens is sure to share a fingerprint.
const (
	K = 12
	W = 8
)

// Threshold is the share of the smaller submission's fingerprints that the
// other must hold for a pair to be listed.
const Threshold = 0.9

// MinFingerprints is how many fingerprints of its own (beyond the
// starter's) a submission needs to be compared at all: a starter returned
// nearly untouched is alike in every class and says nothing.
const MinFingerprints = 8

// Normalize returns src as token kinds: identifiers as "I", literals by
// kind, keywords and operators as themselves, comments and the automatic
// semicolons left out.
func Normalize(src []byte) []string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	f := fset.AddFile("", fset.Base(), len(src))
	s.Init(f, src, func(token.Position, string) {}, 0)
	var out []string
	for {
		_, tok, lit := s.Scan()
		switch {
		case tok == token.EOF:
			return out
		case tok == token.SEMICOLON && lit == "\n":
			continue
		case tok == token.IDENT:
			out = append(out, "I")
		case tok.IsLiteral():
			out = append(out, tok.String())
		default:
			out = append(out, tok.String())
		}
	}
}

// Fingerprints returns the winnowed fingerprints of the files' token
// streams, sorted and each once. Files are taken in name order.
func Fingerprints(files map[string][]byte) []uint64 {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var toks []string
	for _, n := range names {
		toks = append(toks, Normalize(files[n])...)
	}
	if len(toks) < K {
		return nil
	}
	hashes := make([]uint64, 0, len(toks)-K+1)
	for i := 0; i+K <= len(toks); i++ {
		h := fnv.New64a()
		for _, t := range toks[i : i+K] {
			h.Write([]byte(t))
			h.Write([]byte{0})
		}
		hashes = append(hashes, h.Sum64())
	}
	set := map[uint64]bool{}
	for i := 0; i+W <= len(hashes) || (i == 0 && len(hashes) > 0); i++ {
		end := min(i+W, len(hashes))
		set[slices.Min(hashes[i:end])] = true
	}
	out := make([]uint64, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// Without returns fp with every fingerprint of base left out: the
// submission's own code, without what the starter gave everyone.
func Without(fp, base []uint64) []uint64 {
	out := []uint64{}
	for _, h := range fp {
		if _, found := slices.BinarySearch(base, h); !found {
			out = append(out, h)
		}
	}
	return out
}

// Overlap is the share of the smaller set's fingerprints found in the
// other, from 0 to 1. Both must be sorted.
func Overlap(a, b []uint64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	shared := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			shared++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(shared) / float64(min(len(a), len(b)))
}

// Pair is two submissions whose code is near-identical.
type Pair struct {
	A, B    string
	Overlap float64
}

// Pairs returns the pairs of fps whose Overlap is at least Threshold,
// each with at least MinFingerprints of its own, sorted by name.
func Pairs(fps map[string][]uint64) []Pair {
	names := make([]string, 0, len(fps))
	for n, fp := range fps {
		if len(fp) >= MinFingerprints {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []Pair
	for i, a := range names {
		for _, b := range names[i+1:] {
			if o := Overlap(fps[a], fps[b]); o >= Threshold {
				out = append(out, Pair{A: a, B: b, Overlap: o})
			}
		}
	}
	return out
}
