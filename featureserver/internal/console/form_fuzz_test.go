package console

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzParseEvents: whatever is typed, the types read back contain no separator, are
// unique and non-empty, and joining them reads back the same.
func FuzzParseEvents(f *testing.F) {
	for _, s := range []string{"", "invoice.paid", "a, b\nc", "a,a", " * ", ",,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, field string) {
		got := parseEvents(field)
		for i, e := range got {
			if e == "" || strings.ContainsAny(e, ", \n\t") || slices.Index(got, e) != i {
				t.Fatalf("parseEvents(%q) = %q", field, got)
			}
		}
		if again := parseEvents(strings.Join(got, ",")); !slices.Equal(again, got) {
			t.Fatalf("round trip of %q: %q", got, again)
		}
	})
}

// FuzzParsePolicy: an accepted policy is one JSON object; anything else is refused.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"", `{"scheduleSeconds":[1,2]}`, `[1]`, `null`, `{} {}`, `{"a":`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, field string) {
		raw, err := parsePolicy(field)
		if err != nil || raw == nil {
			if err == nil && strings.TrimSpace(field) != "" {
				t.Fatalf("parsePolicy(%q) = nil without an error", field)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			t.Fatalf("parsePolicy(%q) = %s, not an object: %v", field, raw, err)
		}
	})
}

// FuzzParseTime: an accepted time is UTC and formats back to a time that parses to
// the same instant.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"", "2026-03-01T12:00", "2026-03-01T12:00:00Z", "2026-03-01", "yesterday"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, field string) {
		got, err := parseTime(field)
		if err != nil || got.IsZero() {
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("parseTime(%q) in %v", field, got.Location())
		}
		back, err := parseTime(got.Format(time.RFC3339Nano))
		if err != nil || !back.Equal(got) {
			t.Fatalf("parseTime(%q) = %v; its RFC 3339 form reads %v, %v", field, got, back, err)
		}
	})
}
