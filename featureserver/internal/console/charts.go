package console

import (
	"fmt"
	"sort"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodeapi"
	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

// chart is a stacked bar chart of an endpoint's attempts per hour by outcome, drawn
// as SVG from the API's statistics (GET /api/v1/webhooks/{id}/stats).
type chart struct {
	Width, Height int
	Bars          []bar
	Legend        []legendItem
	Total         int
	Max           int
	From, To      string
}

type bar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type legendItem struct {
	Class, Label string
	Count        int
}

const (
	chartW = 480
	chartH = 90
)

// outcomeColour is the CSS class of an outcome in the charts: success, throttled,
// failures, and the rest.
func outcomeColour(o string) string {
	switch o {
	case "success":
		return "o-success"
	case "throttled", "endpoint_paused":
		return "o-held"
	case "http_4xx", "http_5xx", "gone", "redirect":
		return "o-http"
	default:
		return "o-network"
	}
}

func attemptsChart(st outboxapi.WebhookStats) chart {
	c := chart{Width: chartW, Height: chartH}
	if len(st.Buckets) == 0 {
		return c
	}
	for _, b := range st.Buckets {
		n := 0
		for _, v := range b.Outcomes {
			n += v
		}
		c.Max = max(c.Max, n)
	}
	outcomes := make([]string, 0, len(st.Totals))
	for o, n := range st.Totals {
		outcomes = append(outcomes, o)
		c.Total += n
	}
	sort.Strings(outcomes)
	for _, o := range outcomes {
		c.Legend = append(c.Legend, legendItem{Class: outcomeColour(o), Label: o, Count: st.Totals[o]})
	}
	w := float64(chartW) / float64(len(st.Buckets))
	for i, b := range st.Buckets {
		y := float64(chartH)
		for _, o := range outcomes {
			n := b.Outcomes[o]
			if n == 0 || c.Max == 0 {
				continue
			}
			h := float64(n) / float64(c.Max) * (chartH - 4)
			y -= h
			c.Bars = append(c.Bars, bar{X: float64(i)*w + 1, Y: y, W: w - 2, H: h, Class: outcomeColour(o),
				Title: fmt.Sprintf("%s: %d %s", b.Start.UTC().Format("Jan 2 15:04Z"), n, o)})
		}
	}
	c.From, c.To = st.Since.UTC().Format("Jan 2 15:04Z"), st.Until.UTC().Format("15:04Z")
	return c
}

// barChart is a horizontal bar per call status.
type barChart struct {
	Width, Height int
	Rows          []barRow
}

type barRow struct {
	Label      string
	Count      int
	Y, W       float64
	TextX      float64
	Class      string
	LabelWidth int
}

func callsChart(by []nodeapi.CallStatusCount) barChart {
	c := barChart{Width: 480, Height: 24*len(by) + 4}
	top := 0
	for _, s := range by {
		top = max(top, s.Count)
	}
	for i, s := range by {
		w := 0.0
		if top > 0 {
			w = float64(s.Count) / float64(top) * 300
		}
		class := "s-other"
		switch s.Status {
		case "completed":
			class = "s-completed"
		case "failed", "busy", "no-answer":
			class = "s-failed"
		case "in-progress", "ringing", "trying", "early-media":
			class = "s-active"
		}
		c.Rows = append(c.Rows, barRow{Label: s.Status, Count: s.Count, Y: float64(i*24 + 2), W: max(w, 2), TextX: 130 + max(w, 2) + 6, Class: class})
	}
	return c
}
