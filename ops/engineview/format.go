package engineview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// MaxListed is how many leases and dead letters Format lists one by one;
// the rest are counted.
const MaxListed = 10

// Format writes s for an operator: the counts, the oldest visible job's
// age, the unfinished jobs by delivery count, the leases by worker with
// their time left, the dead letters' reasons, and the drain estimate.
func (s Status) Format(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("engine\t%s at %s\n", s.Namespace, s.Now.UTC().Format(time.RFC3339Nano))
	if s.Jobs == 0 {
		p("jobs\tnone: no job record under %s:job: (is the namespace right?)\n", s.Namespace)
	} else {
		p("jobs\t%d submitted: %d queued (%d in backoff), %d leased (%d ended), %d done, %d dead\n",
			s.Jobs, s.Queued, s.Backoff, s.Leased, s.LeasesEnded, s.Done, s.Dead)
	}
	if s.Visible == 0 {
		p("visible\tnone\n")
	} else {
		p("visible\t%d, the oldest visible for %s\n", s.Visible, roundDur(s.OldestVisibleAge))
	}
	p("deliveries\t%d in all, last token %d\n", s.Deliveries, s.Token)
	if len(s.ByDeliveries) > 0 {
		var parts []string
		for _, d := range s.ByDeliveries {
			parts = append(parts, fmt.Sprintf("%d job%s after %d", d.Jobs, plural(d.Jobs), d.Deliveries))
		}
		p("unfinished\tby delivery count: %s\n", strings.Join(parts, ", "))
	}
	p("drain\t%s\n", s.Drain)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("engineview: format: %w", err)
	}

	if len(s.Leases) > 0 {
		fmt.Fprintf(tw, "\nleases by worker\tjob\ttoken\tdelivery\tstep\ttime left\n")
		for i, l := range s.Leases {
			if i == MaxListed {
				fmt.Fprintf(tw, "  … %d more\t\t\t\t\t\n", len(s.Leases)-MaxListed)
				break
			}
			worker := l.Worker
			if worker == "" {
				worker = "(not recorded)"
			}
			left := roundDur(l.Left).String()
			if l.Left <= 0 {
				left = "ended " + roundDur(-l.Left).String() + " ago"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%s\n", worker, l.JobID, l.Token, l.Delivery, l.Step, left)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("engineview: format: %w", err)
		}
	}
	if len(s.DeadLetters) > 0 {
		var parts []string
		for _, r := range s.DeadReasons {
			parts = append(parts, fmt.Sprintf("%d %s", r.Jobs, r.Reason))
		}
		fmt.Fprintf(tw, "\ndead letters: %s\n", strings.Join(parts, ", "))
		fmt.Fprintf(tw, "  job\treason\tdeliveries\tlast error\n")
		for i, d := range s.DeadLetters {
			if i == MaxListed {
				fmt.Fprintf(tw, "  … %d more\t\t\t\n", len(s.DeadLetters)-MaxListed)
				break
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", d.JobID, d.Reason, d.Deliveries, oneLine(d.LastError))
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("engineview: format: %w", err)
		}
	}
	return nil
}

// plural is "s" unless n is one.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// oneLine keeps an error on one line of at most 100 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	if r := []rune(s); len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return s
}
