package grader

import "testing"

const spinningSource = `package claim

import "sync"

type Store struct{ mu sync.Mutex }

func New() *Store { return &Store{} }

func (s *Store) Do(key string) error {
	if key == "" {
		return nil
	}
	for {
	}
}

func (s *Store) Busy() {
	s.mu.Lock()
	go func() {
		for i := 0; ; i++ {
		}
	}()
}
`

// TestPlaceMovesAFrameIntoItsFunction: the runtime places a goroutine
// spinning in an inlined for {} at line 1 of the file; the frame is moved
// to the loop, or to the function's first line when it has none, and a
// frame inside its function keeps its line.
func TestPlaceMovesAFrameIntoItsFunction(t *testing.T) {
	s := newSources(map[string][]byte{"claim.go": []byte(spinningSource)})
	tests := []struct {
		in   Frame
		want int
	}{
		{Frame{File: "claim.go", Line: 1, Func: "Store.Do", State: "running"}, 13},
		{Frame{File: "claim.go", Line: 1, Func: "Store.Busy.func1", State: "running"}, 17},
		{Frame{File: "claim.go", Line: 18, Func: "Store.Busy", State: "sync.Mutex.Lock"}, 18},
		{Frame{File: "claim.go", Line: 1, Func: "New", State: "running"}, 7},
		{Frame{File: "other.go", Line: 1, Func: "Store.Do", State: "running"}, 1},
		{Frame{File: "claim.go", Line: 1, Func: "Gone", State: "running"}, 1},
	}
	for _, tt := range tests {
		if got := s.place(tt.in); got.Line != tt.want {
			t.Errorf("place(%s) = line %d, want %d", tt.in, got.Line, tt.want)
		}
	}
}
