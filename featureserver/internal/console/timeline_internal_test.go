package console

import (
	"encoding/json"
	"strings"
	"testing"
)

func events(lines ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(lines))
	for i, l := range lines {
		out[i] = json.RawMessage(l)
	}
	return out
}

// The timeline puts each event on its lane at its time: a hook attempt as long as
// it took, a retry as long as its delay, a verb from its start to its end; the drop
// and the reconnect get their labels; every event is listed, the unreadable too.
func TestBuildTimeline(t *testing.T) {
	tl := buildTimeline(events(
		`{"t_ms":0,"kind":"call.start","from":"a","to":"b","direction":"inbound"}`,
		`{"t_ms":0,"kind":"hook.attempt","url":"ws://x","transport":"websocket","attempt":1,"status":101,"class":"success","duration_ms":100}`,
		`{"t_ms":100,"kind":"ws.open","url":"ws://x"}`,
		`{"t_ms":200,"kind":"verb.start","verb":"say"}`,
		`{"t_ms":400,"kind":"ws.close","code":1011}`,
		`{"t_ms":400,"kind":"hook.retry","url":"ws://x","attempt":2,"delay_ms":500}`,
		`{"t_ms":900,"kind":"ws.reconnect","attempt":1}`,
		`{"t_ms":950,"kind":"verb.end","verb":"say"}`,
		`{"t_ms":990,"kind":"ws.close","code":1000}`,
		`{"t_ms":1000,"kind":"call.end","status":"completed","reason":"hangup-verb","sip_status":200}`,
		`not json`,
	))
	if len(tl.Events) != 10 {
		t.Fatalf("%d events listed, want the 10 readable", len(tl.Events))
	}
	byKind := map[string]mark{}
	var closes []string
	for _, m := range tl.Marks {
		if m.Kind == "ws.close" {
			closes = append(closes, m.Label)
			if _, ok := byKind[m.Kind]; ok {
				continue // the first one: the drop
			}
		}
		byKind[m.Kind] = m
	}
	if strings.Join(closes, ",") != "drop 1011,close 1000" || byKind["call.end"].Label != "end: hangup-verb" {
		t.Fatalf("closes %q, end %q: want the drop, then the node's close at the end", closes, byKind["call.end"].Label)
	}
	attempt, retry, verb := byKind["hook.attempt"], byKind["hook.retry"], byKind["verb"]
	if attempt.W <= 0 || retry.W <= attempt.W || verb.W <= 0 || attempt.Y != retry.Y || byKind["ws.close"].Y != byKind["ws.reconnect"].Y {
		t.Fatalf("marks %+v", byKind)
	}
	if byKind["ws.close"].Label != "drop 1011" || byKind["ws.reconnect"].Label != "reconnect #1" || verb.Label != "say" {
		t.Fatalf("labels %q %q %q", byKind["ws.close"].Label, byKind["ws.reconnect"].Label, verb.Label)
	}
	if byKind["ws.close"].X >= byKind["ws.reconnect"].X || byKind["call.end"].X != tlLeft+tlWidth {
		t.Fatalf("the time axis is out of order: %+v", byKind)
	}
	if !strings.Contains(tl.Events[4].Detail, "code=1011") {
		t.Fatalf("detail %q", tl.Events[4].Detail)
	}
}

// Labels on a lane never overlap: a second one moves below the lane, a third that
// fits nowhere is left to the tooltip; one at the right edge ends at its mark; a
// drop's label is placed before an open's.
func TestPlaceLabels(t *testing.T) {
	marks := []mark{
		{X: 100, Y: 50, Label: "first label"},
		{X: 110, Y: 50, Label: "second label"},
		{X: 120, Y: 50, Label: "third label"},
		{X: 995, Y: 50, Label: "at the edge"},
		{X: 130, Y: 90, Label: "open", Kind: "ws.open"},
		{X: 131, Y: 90, Label: "drop 1011", Kind: "ws.close"},
	}
	placeLabels(marks, 1000)
	if marks[0].LabelY != -10 || marks[1].LabelY != 20 || marks[2].Label != "" {
		t.Fatalf("labels %+v", marks)
	}
	if marks[3].Anchor != "end" || marks[3].LabelY != -10 {
		t.Fatalf("edge label %+v", marks[3])
	}
	if marks[5].LabelY != -10 || marks[4].LabelY != 20 {
		t.Fatalf("the drop's label does not come first: %+v %+v", marks[4], marks[5])
	}
}

// A compat warning is drawn on the alerts lane with its rule, and listed with its
// detail (docs/compatibility.md §2).
func TestBuildTimelineCompat(t *testing.T) {
	tl := buildTimeline(events(
		`{"t_ms":0,"kind":"call.start","from":"a","to":"b","direction":"inbound"}`,
		`{"t_ms":10,"kind":"alert","type":"webhook-failure","detail":"x"}`,
		`{"t_ms":20,"kind":"compat","rule":"tag-command","detail":"jambonz ignores it"}`,
		`{"t_ms":30,"kind":"call.end","status":"completed","reason":"hangup-verb","sip_status":200}`,
	))
	var alert, compat mark
	for _, m := range tl.Marks {
		switch m.Kind {
		case "alert":
			alert = m
		case "compat":
			compat = m
		}
	}
	if compat.Label != "compat: tag-command" || compat.Y != alert.Y || !strings.Contains(compat.Class, "compat") ||
		!strings.Contains(tl.Events[2].Detail, "jambonz ignores it") {
		t.Fatalf("compat mark %+v (alert %+v), events %+v", compat, alert, tl.Events)
	}
}
