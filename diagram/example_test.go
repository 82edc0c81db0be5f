package diagram_test

import (
	"fmt"
	"strings"

	"github.com/fourth-outcome/labkit/diagram"
)

// A feedback timeline built in Go: one lane per worker, process or store,
// student-supplied strings as they come (they are cleaned and escaped), no
// description (one is generated from the steps).
func ExampleSequence() {
	s := &diagram.Sequence{
		Common: diagram.Common{Name: "case-zombie", Title: "zombie_write_is_refused: what happened"},
		Lanes: []diagram.Lane{
			{ID: "w1", Label: "worker 1"},
			{ID: "store", Label: "store"},
		},
		Steps: []diagram.Step{
			{Kind: diagram.Begin, From: "w1", Span: diagram.Lease, Text: "token 33"},
			{Kind: diagram.Message, From: "w1", To: "store", Text: `Write(33, "<b>balance</b>")`, Time: "1s"},
			{Kind: diagram.Lost, From: "store", To: "w1", Text: "ok"},
			{Kind: diagram.End, From: "w1", Span: diagram.Lease},
			{Kind: diagram.Crash, From: "w1", Text: "panic: nil map"},
		},
	}
	svg, err := s.SVG()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Contains(svg, `&lt;b&gt;balance&lt;/b&gt;`), strings.Contains(svg, "<script"))
	_, desc, _ := strings.Cut(svg, `<desc id="case-zombie-desc">`)
	desc, _, _ = strings.Cut(desc, "</desc>")
	fmt.Println(desc)
	// Output:
	// true false
	// Sequence diagram. Lanes, left to right: worker 1, store. worker 1&#39;s lease begins: token 33. At 1s, worker 1 to store: Write(33, &quot;&lt;b&gt;balance&lt;/b&gt;&quot;). store to worker 1, lost on the way: ok. worker 1&#39;s lease ends. worker 1 crashes: panic: nil map.
}
