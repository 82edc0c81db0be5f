package term

import (
	"bytes"
	"io"
	"sync"
)

// Progress shows progress lines on a terminal one over the other, so a run
// leaves no trail above its result: each line replaces the last, and Clear
// removes the last one.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	partial []byte
	shown   bool
}

// NewProgress returns a Progress writing to w, which should be a terminal
// (see ColorFor; elsewhere write progress lines as they are).
func NewProgress(w io.Writer) *Progress { return &Progress{w: w} }

// Write shows each complete line written, over the previous one.
func (p *Progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimRight(p.partial[:i], "\r ")
		p.partial = p.partial[i+1:]
		if _, err := io.WriteString(p.w, "\r\x1b[2K"+string(line)); err != nil {
			return len(b), err
		}
		p.shown = true
	}
	return len(b), nil
}

// Clear removes the last line shown.
func (p *Progress) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		io.WriteString(p.w, "\r\x1b[2K")
		p.shown = false
	}
}
