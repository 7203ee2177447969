package console

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// A call's timeline drawn on a time axis: one lane per subject (hooks, the
// WebSocket, messages, verbs, the call's status, alerts), each event where it
// happened, hook attempts as long as they took and retries as long as their delay.
// It is drawn from the call's record as the API answers it (the `simulate --json`
// events, docs/call-control.md §9).

const (
	tlLeft   = 110 // room for the lane names
	tlWidth  = 1040
	tlLaneH  = 46
	tlTop    = 30
	tlBottom = 26
)

type lane struct {
	Name string
	Y    int
}

type tick struct {
	X     float64
	Label string
}

type mark struct {
	Kind   string // the event kind, as data-kind
	Class  string
	X, Y   float64
	W      float64 // > 0: a span
	Label  string  // drawn beside the mark
	LabelX float64
	LabelY float64 // offset from Y: above the lane, or below it when that is taken
	Anchor string  // start, or end near the right edge
	Title  string  // the tooltip: every field
}

type timelineEvent struct {
	At     string
	Kind   string
	Detail string
}

type timeline struct {
	Width, Height int
	AxisY         int
	Lanes         []lane
	Ticks         []tick
	Marks         []mark
	Events        []timelineEvent
	Span          string
	EndMS         float64 // the last event's time (or end of a span) on the call's clock
}

var laneOf = map[string]int{
	"hook.attempt": 0, "hook.retry": 0, "fault": 0,
	"ws.open": 1, "ws.close": 1, "ws.reconnect": 1,
	"msg.sent": 2, "msg.recv": 2,
	"verb.start": 3, "verb.end": 3, "caller.input": 3, "agent.spoke": 3,
	"call.start": 4, "call.status": 4, "call.end": 4,
	"alert": 5, "compat": 5,
}

var laneNames = []string{"hooks", "websocket", "messages", "verbs", "status", "alerts, compat"}

// buildTimeline lays out the events of a call's record; an event that is not a
// JSON object is listed, not drawn.
func buildTimeline(raw []json.RawMessage) timeline {
	type ev struct {
		t      float64
		kind   string
		fields map[string]any
	}
	evs := make([]ev, 0, len(raw))
	end := 0.0
	for _, r := range raw {
		var m map[string]any
		if json.Unmarshal(r, &m) != nil {
			continue
		}
		t, _ := m["t_ms"].(float64)
		k, _ := m["kind"].(string)
		evs = append(evs, ev{t: t, kind: k, fields: m})
		extent := t + num(m, "duration_ms")
		if k == "hook.retry" {
			extent = t + num(m, "delay_ms")
		}
		end = math.Max(end, extent)
	}
	if end <= 0 {
		end = 1
	}
	tl := timeline{Width: tlLeft + tlWidth + 20, Height: tlTop + len(laneNames)*tlLaneH + tlBottom}
	tl.AxisY = tlTop + len(laneNames)*tlLaneH
	for i, n := range laneNames {
		tl.Lanes = append(tl.Lanes, lane{Name: n, Y: tlTop + i*tlLaneH + tlLaneH/2})
	}
	x := func(ms float64) float64 { return tlLeft + ms/end*tlWidth }
	step := niceStep(end / 8)
	for t := 0.0; t <= end+step/2; t += step {
		tl.Ticks = append(tl.Ticks, tick{X: x(math.Min(t, end)), Label: fmtMS(t)})
	}
	tl.Span, tl.EndMS = fmtMS(end), end
	openVerb := map[string]float64{}
	for _, e := range evs {
		tl.Events = append(tl.Events, timelineEvent{At: fmtMS(e.t), Kind: e.kind, Detail: details(e.fields)})
		li, ok := laneOf[e.kind]
		if !ok {
			continue
		}
		y := float64(tl.Lanes[li].Y)
		m := mark{Kind: e.kind, Class: "ev " + strings.ReplaceAll(e.kind, ".", "-"), X: x(e.t), Y: y,
			Title: fmtMS(e.t) + " " + e.kind + " " + details(e.fields)}
		switch e.kind {
		case "hook.attempt":
			m.W = math.Max(x(e.t+num(e.fields, "duration_ms"))-m.X, 3)
			class, _ := e.fields["class"].(string)
			if class != "success" {
				m.Class += " failed"
			}
			m.Label = fmt.Sprintf("#%d %s", int(num(e.fields, "attempt")), statusText(e.fields))
		case "hook.retry":
			m.W = math.Max(x(e.t+num(e.fields, "delay_ms"))-m.X, 2)
			m.Label = "retry in " + fmtMS(num(e.fields, "delay_ms"))
		case "ws.open":
			m.Label = "open"
		case "ws.close":
			// 1000 is the node closing the session at the call's end; anything else
			// (1006: no close frame) is a drop.
			if code := int(num(e.fields, "code")); code == 1000 {
				m.Label = "close 1000"
			} else {
				m.Label = fmt.Sprintf("drop %d", code)
			}
		case "ws.reconnect":
			m.Label = fmt.Sprintf("reconnect #%d", int(num(e.fields, "attempt")))
		case "verb.start":
			verb, _ := e.fields["verb"].(string)
			openVerb[verb] = e.t
			continue // drawn at its end, as a span
		case "verb.end":
			verb, _ := e.fields["verb"].(string)
			start, ok := openVerb[verb]
			if !ok {
				start = e.t
			}
			delete(openVerb, verb)
			m.Kind, m.X = "verb", x(start)
			m.W = math.Max(x(e.t)-m.X, 3)
			m.Label = verb
		case "call.status":
			m.Label, _ = e.fields["status"].(string)
		case "call.end":
			reason, _ := e.fields["reason"].(string)
			m.Label = "end: " + reason
		case "alert":
			m.Label, _ = e.fields["type"].(string)
		case "fault":
			m.Label, _ = e.fields["fault"].(string)
		case "compat":
			// What jambonz would do here that the app may not expect (docs/compatibility.md).
			rule, _ := e.fields["rule"].(string)
			m.Label = "compat: " + rule
		}
		tl.Marks = append(tl.Marks, m)
	}
	for verb, start := range openVerb { // still running
		tl.Marks = append(tl.Marks, mark{Kind: "verb", Class: "ev verb running", X: x(start), Y: float64(tl.Lanes[3].Y),
			W: math.Max(x(end)-x(start), 3), Label: verb, Title: verb + " since " + fmtMS(start)})
	}
	placeLabels(tl.Marks, float64(tl.Width))
	return tl
}

// labelCharWidth is about the width of a character of the labels (11 px type).
const labelCharWidth = 6.2

// placeLabels puts each label above its lane, or below it when another label is
// there, or leaves it to the tooltip when both are taken; a label that would run
// past the right edge ends at its mark. Drops, reconnects, alerts and failed
// attempts are placed first, so they are the ones that stay.
func placeLabels(marks []mark, width float64) {
	type span struct{ from, to float64 }
	taken := map[[2]float64][]span{} // lane y and row offset: the labels there
	free := func(k [2]float64, sp span) bool {
		for _, o := range taken[k] {
			if sp.from < o.to+4 && o.from < sp.to+4 {
				return false
			}
		}
		return true
	}
	order := make([]int, 0, len(marks))
	for i := range marks {
		if marks[i].Label != "" {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return labelRank(marks[order[a]]) < labelRank(marks[order[b]]) })
	for _, i := range order {
		m := &marks[i]
		w := float64(len(m.Label)) * labelCharWidth
		m.LabelX, m.Anchor = m.X, "start"
		sp := span{m.X, m.X + w}
		if sp.to > width-4 {
			m.LabelX, m.Anchor = m.X+m.W, "end"
			sp = span{m.LabelX - w, m.LabelX}
		}
		placed := false
		for _, dy := range []float64{-10, 20} {
			k := [2]float64{m.Y, dy}
			if free(k, sp) {
				m.LabelY, placed = dy, true
				taken[k] = append(taken[k], sp)
				break
			}
		}
		if !placed {
			m.Label = ""
		}
	}
}

// labelRank orders labels by how much an operator needs them.
func labelRank(m mark) int {
	switch {
	case m.Kind == "ws.close" || m.Kind == "ws.reconnect" || m.Kind == "alert" || m.Kind == "compat" || m.Kind == "call.end":
		return 0
	case strings.Contains(m.Class, "failed") || m.Kind == "hook.retry" || m.Kind == "fault":
		return 1
	default:
		return 2
	}
}

func num(m map[string]any, k string) float64 {
	f, _ := m[k].(float64)
	return f
}

func statusText(m map[string]any) string {
	if s := num(m, "status"); s > 0 {
		return fmt.Sprint(int(s))
	}
	class, _ := m["class"].(string)
	return class
}

// details lists an event's fields but its time, call and kind, sorted by name.
func details(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "t_ms" && k != "call_sid" && k != "kind" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := m[k]
		if f, ok := v.(float64); ok && f == math.Trunc(f) {
			v = int64(f)
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	return strings.Join(parts, " ")
}

func fmtMS(ms float64) string {
	switch {
	case ms >= 60000:
		return fmt.Sprintf("%.1f min", ms/60000)
	case ms >= 1000:
		return fmt.Sprintf("%.2f s", ms/1000)
	default:
		return fmt.Sprintf("%.0f ms", ms)
	}
}

// niceStep rounds a tick interval up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, f := range []float64{1, 2, 5, 10} {
		if raw <= f*p {
			return f * p
		}
	}
	return 10 * p
}
