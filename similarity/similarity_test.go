package similarity

import "testing"

const starter = `package claim

// Store is the starter's.
type Store struct{}

func New() *Store { return &Store{} }
`

const solution = starter + `
func (s *Store) Do(key string, work func() (string, error)) (string, error) {
	s.mu.Lock()
	c, ok := s.calls[key]
	if !ok {
		c = &call{done: make(chan struct{})}
		s.calls[key] = c
		s.mu.Unlock()
		c.val, c.err = work()
		close(c.done)
		return c.val, c.err
	}
	s.mu.Unlock()
	<-c.done
	return c.val, c.err
}
`

// renamed is solution with every identifier renamed, comments added and
// the layout changed.
const renamed = starter + `
// Do does it.
func (st *Store) Do(k string, fn func() (string, error)) (string, error) {
	st.lock.Lock()    // take it
	entry, found := st.table[k]
	if !found {
		entry = &pending{finished: make(chan struct{})}
		st.table[k] = entry
		st.lock.Unlock()
		entry.result, entry.failure = fn()
		close(entry.finished)
		return entry.result, entry.failure
	}
	st.lock.Unlock()
	<-entry.finished
	return entry.result, entry.failure
}
`

const other = starter + `
func (s *Store) Do(key string, work func() (string, error)) (string, error) {
	for {
		s.mu.Lock()
		if r, ok := s.results[key]; ok {
			s.mu.Unlock()
			return r.v, r.err
		}
		if s.running[key] {
			s.cond.Wait()
			s.mu.Unlock()
			continue
		}
		s.running[key] = true
		s.mu.Unlock()
		v, err := work()
		s.mu.Lock()
		s.results[key] = result{v, err}
		delete(s.running, key)
		s.cond.Broadcast()
		s.mu.Unlock()
		return v, err
	}
}
`

func fp(src string) []uint64 {
	return Without(Fingerprints(map[string][]byte{"claim.go": []byte(src)}), Fingerprints(map[string][]byte{"claim.go": []byte(starter)}))
}

func TestRenamedCopyIsNearIdentical(t *testing.T) {
	if got := Overlap(fp(solution), fp(renamed)); got < Threshold {
		t.Errorf("Overlap(solution, renamed) = %.2f, want at least %.2f", got, Threshold)
	}
	if got := Overlap(fp(solution), fp(other)); got >= Threshold {
		t.Errorf("Overlap(solution, another solution) = %.2f, want under %.2f", got, Threshold)
	}
	pairs := Pairs(map[string][]uint64{"ada": fp(solution), "bob": fp(renamed), "cy": fp(other), "starter": fp(starter)})
	if len(pairs) != 1 || pairs[0].A != "ada" || pairs[0].B != "bob" {
		t.Errorf("Pairs = %+v, want ada and bob only", pairs)
	}
}

func TestStarterAloneHasNoFingerprints(t *testing.T) {
	if got := fp(starter); len(got) != 0 {
		t.Errorf("fingerprints of the starter without the starter = %v, want none", got)
	}
}
