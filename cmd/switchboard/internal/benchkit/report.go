package benchkit

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/switchboard-voice/switchboard/internal/outboxbench"
)

// Format is how a bench's results are printed.
type Format int

const (
	// Table is aligned columns under the title: medians and the ratio's spread.
	Table Format = iota
	// JSON is one Result object per line (`switchboard bench --json`).
	JSON
	// Markdown is the title and a table of docs/BENCHMARKS.md.
	Markdown
)

// Write prints res, the results of a bench titled title, in format f.
func Write(w io.Writer, f Format, title string, res []Result) error {
	switch f {
	case JSON:
		enc := json.NewEncoder(w)
		for _, r := range res {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case Markdown:
		fmt.Fprintf(w, "%s\n\n| measure | unit | better | ours | baseline | ratio (median) | ratio min–max | rounds |\n|---|---|---|--:|--:|--:|--:|--:|\n", title)
		for _, r := range res {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | **%.3f** | %.3f–%.3f | %d |\n", r.Measure, r.Unit, r.Better, figure(r.Ours), figure(r.Baseline),
				r.Ratio.Median, r.Ratio.Min, r.Ratio.Max, r.Rounds)
		}
		return nil
	}
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measure\tunit\tbetter\tours\tbaseline\tratio min\tmedian\tmax\trounds\t")
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%d\t\n", r.Measure, r.Unit, r.Better, figure(r.Ours), figure(r.Baseline),
			r.Ratio.Min, r.Ratio.Median, r.Ratio.Max, r.Rounds)
	}
	return tw.Flush()
}

// figure prints a measure with about three significant digits.
func figure(v float64) string {
	switch a := max(v, -v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// WriteOutboxRounds prints what `bench outbox` shows below its table: each outbox
// round's lateness after schedule, CPU a delivery and how busy the store's writer was.
func WriteOutboxRounds(w io.Writer, rounds []outboxbench.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "outbox round\tlateness p50\tp99\tCPU a delivery\tcores\twriter busy\tcommitting\twrites a tx\t")
	for i, r := range rounds {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f µs\t%.2f\t%.0f%%\t%.0f%%\t%.1f\t\n", i+1, roundMS(r.LatenessP50), roundMS(r.LatenessP99),
			micros(r.OutboxCPU), r.OutboxCores, 100*r.WriterBusy, 100*r.WriterCommitting, r.WritesPerTransaction)
	}
	return tw.Flush()
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func roundMS(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}
