package snapshot

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
)

// Call is what a snapshot records of a call.
type Call struct {
	Status   string    `yaml:"status"`
	Reason   string    `yaml:"reason"`
	Verbs    []string  `yaml:"verbs"`
	Hooks    []string  `yaml:"hooks"`
	Requests []Request `yaml:"requests"`
	// Alerts are the types of the alerts raised, in order.
	Alerts []string `yaml:"alerts,omitempty"`
	// Compat are the rules of the call's compat warnings, in order: where it did
	// what jambonz does and that would silently hurt the application
	// (docs/compatibility.md §2). The rules, not their details: a detail names the
	// app's host and port, and its wording is no contract.
	Compat []string `yaml:"compat,omitempty"`
}

// Request is one request the application received.
type Request struct {
	Hook   string `yaml:"hook,omitempty"`
	Type   string `yaml:"type,omitempty"` // a WebSocket message's
	Method string `yaml:"method,omitempty"`
	// Payload maps each path the scenario chose (snapshot.payload) that the
	// request's payload has to its value, masked by rule; with "*", every field.
	Payload map[string]any `yaml:"payload,omitempty"`
}

// The placeholders of masked values.
const (
	MaskedID        = "<id>"
	MaskedAddress   = "<address>"
	MaskedTimestamp = "<timestamp>"
	Masked          = "<masked>" // a path the scenario masks
)

// Record is what a snapshot keeps of r, under spec.
func Record(r *callctl.Result, spec scenario.SnapshotSpec) Call {
	c := Call{Status: string(r.Status), Reason: r.Reason, Verbs: nonNil(r.Verbs), Hooks: nonNil(r.Hooks), Requests: []Request{}}
	for _, a := range r.Alerts {
		c.Alerts = append(c.Alerts, string(a.Type))
	}
	for _, w := range r.Compat {
		c.Compat = append(c.Compat, string(w.Rule))
	}
	masks := map[string]bool{}
	for _, m := range spec.Mask {
		masks[m] = true
	}
	for _, q := range r.Requests {
		rq := Request{Hook: q.Hook, Type: q.Type, Method: q.Method}
		payload := jsonValue(q.Payload)
		fields, _ := payload.(map[string]any)
		for _, key := range recordedPaths(spec, fields) {
			p, err := scenario.ParsePath(key)
			if err != nil { // checked when the file was read
				continue
			}
			v, ok := p.Lookup(fields)
			if !ok {
				continue
			}
			if rq.Payload == nil {
				rq.Payload = map[string]any{}
			}
			rq.Payload[key] = mask(p, v, masks)
		}
		c.Requests = append(c.Requests, rq)
	}
	return c
}

// recordedPaths are the paths spec records of a payload: its own, or with "*" every
// top-level field.
func recordedPaths(spec scenario.SnapshotSpec, fields map[string]any) []string {
	if !spec.RecordsAllFields() {
		return spec.Payload
	}
	var keys []string
	for k := range fields {
		if _, err := scenario.ParsePath(k); err == nil { // "a.b" as a key is not a path to it
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

var (
	uuidShape      = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	timestampShape = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}`)
)

// volatileKeys are fields whose values change from call to call, by name: the ids
// of jambonz's call fields (docs/call-control.md §8) and of the messages, besides
// every *_sid.
var volatileKeys = map[string]string{
	"call_id": MaskedID, "sbc_callid": MaskedID, "dial_sbc_callid": MaskedID, "trace_id": MaskedID, "msgid": MaskedID,
	"fs_sip_address": MaskedAddress, "local_sip_address": MaskedAddress, "timestamp": MaskedTimestamp,
}

// mask is v at path p, its volatile values masked: a path the scenario masks, a
// field that is volatile by its name or by the shape of its value (a UUID, an
// RFC 3339 time), at any depth.
func mask(p scenario.Path, v any, masks map[string]bool) any {
	if masks[p.String()] {
		return Masked
	}
	if last := p[len(p)-1]; !last.IsIndex {
		if m, ok := volatileKeys[last.Field]; ok {
			return m
		}
		if strings.HasSuffix(last.Field, "_sid") || last.Field == "sid" {
			return MaskedID
		}
	}
	switch x := v.(type) {
	case string:
		switch {
		case uuidShape.MatchString(x):
			return MaskedID
		case timestampShape.MatchString(x):
			return MaskedTimestamp
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mask(append(slices.Clip(p), scenario.Step{Field: k}), e, masks)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mask(append(slices.Clip(p), scenario.Step{Index: i, IsIndex: true}), e, masks)
		}
		return out
	}
	return v
}

// jsonValue is v as encoding/json decodes it (objects map[string]any, lists []any),
// its whole numbers int64 and the others float64, so that what a call sent and what
// a file holds compare alike and 3 is written 3, not 3.0.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return wholeNumbers(out)
}

func wholeNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = wholeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = wholeNumbers(e)
		}
	}
	return v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
