package endpointcache

import (
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestDecode: the columns decode as encoding/json decodes them; the same text is
// served from the cache (no decode: the entry is the same), other text of the same
// endpoint decodes again, and a caller that changes what it got changes nothing the
// next caller gets.
func TestDecode(t *testing.T) {
	var c Cache
	d, err := Decode(&c, "test", "ep_1", `["a","b"]`, `[{"key":"whsec_x"}]`, `{"maxAttempts":3}`)
	if err != nil || len(d.Events) != 2 || d.Secrets[0].Key != "whsec_x" || *d.Overrides.MaxAttempts != 3 {
		t.Fatalf("decoded %+v, %v", d, err)
	}
	first := c.m["ep_1"]
	d.Events[0], d.Secrets[0].Key = "changed", "changed"
	again, err := Decode(&c, "test", "ep_1", []byte(`["a","b"]`), []byte(`[{"key":"whsec_x"}]`), []byte(`{"maxAttempts":3}`))
	if err != nil || c.m["ep_1"] != first || again.Events[0] != "a" || again.Secrets[0].Key != "whsec_x" {
		t.Fatalf("second read %+v (entry reused: %v), %v", again, c.m["ep_1"] == first, err)
	}
	changed, err := Decode(&c, "test", "ep_1", `["c"]`, `[{"key":"whsec_x"}]`, `{"maxAttempts":3}`)
	if err != nil || c.m["ep_1"] == first || len(changed.Events) != 1 || changed.Events[0] != "c" {
		t.Fatalf("after a change %+v, %v", changed, err)
	}
	if d, err := Decode(&c, "test", "ep_2", `null`, `null`, `{}`); err != nil || d.Events != nil || d.Secrets != nil || !reflect.DeepEqual(d.Overrides, outboxdriver.Overrides{}) {
		t.Fatalf("nulls: %+v, %v", d, err)
	}
}

// TestDecodeBadColumn: a column that is not its JSON is an error naming the store,
// the endpoint and the column, and nothing is cached.
func TestDecodeBadColumn(t *testing.T) {
	var c Cache
	for _, cols := range [][3]string{{`[`, `[]`, `{}`}, {`[]`, `{`, `{}`}, {`[]`, `[]`, `[]`}} {
		_, err := Decode(&c, "test", "ep_bad", cols[0], cols[1], cols[2])
		if err == nil || !strings.HasPrefix(err.Error(), "test: endpoint ep_bad ") {
			t.Errorf("%v: %v", cols, err)
		}
	}
	if len(c.m) != 0 {
		t.Fatalf("cached %d entries", len(c.m))
	}
}

// TestDecodeBounded: past maxEntries endpoints the cache starts again.
func TestDecodeBounded(t *testing.T) {
	var c Cache
	for i := range maxEntries + 1 {
		if _, err := Decode(&c, "test", string(rune('a'+i%26))+strings.Repeat("x", i/26), `[]`, `[]`, `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) != 1 {
		t.Fatalf("%d entries after %d endpoints", len(c.m), maxEntries+1)
	}
}
