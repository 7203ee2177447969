package filter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/outbox/internal/filter"
)

const order = `{"amount": 120.5, "currency": "EUR", "count": 3, "big": 9007199254740993,
	"customer": {"tier": "gold", "tags": ["a", "b"], "note": null}, "items": [{"sku": "x1"}, {"sku": "y2"}],
	"a.b": 1}`

func match(t *testing.T, f string) bool {
	t.Helper()
	p, err := filter.Parse([]byte(f))
	if err != nil {
		t.Fatalf("Parse(%s): %v", f, err)
	}
	data, err := filter.Decode([]byte(order))
	if err != nil {
		t.Fatal(err)
	}
	return p.Match(data)
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		filter string
		want   bool
	}{
		{``, true},
		{`null`, true},
		{`{}`, true},
		{`{"currency": "EUR"}`, true},
		{`{"currency": "USD"}`, false},
		{`{"count": 3.0}`, true},            // numbers compare by value
		{`{"count": "3"}`, false},           // not across types
		{`{"customer.tier": "gold"}`, true}, // dotted paths
		{`{"customer": {"tier": "gold", "tags": ["a", "b"], "note": null}}`, true}, // a whole object
		{`{"customer": {"tier": "gold"}}`, false},
		{`{"items.1.sku": "y2"}`, true}, // array index
		{`{"items.01.sku": "y2"}`, false},
		{`{"items.2.sku": "y2"}`, false},
		{`{"currency": {"$in": ["USD", "EUR"]}}`, true},
		{`{"currency": {"$nin": ["USD", "EUR"]}}`, false},
		{`{"missing": {"$nin": ["x"]}}`, true},
		{`{"missing": {"$ne": 1}}`, true},
		{`{"count": {"$ne": 3}}`, false},
		{`{"customer.note": {"$exists": true}}`, true}, // null is present
		{`{"customer.email": {"$exists": false}}`, true},
		{`{"customer.email": {"$exists": true}}`, false},
		{`{"amount": {"$gt": 100, "$lte": 120.5}}`, true},
		{`{"amount": {"$gte": 121}}`, false},
		{`{"amount": {"$lt": 1e3}}`, true},
		{`{"currency": {"$gt": 1}}`, false},          // not a number: no comparison holds
		{`{"big": {"$gt": 9007199254740992}}`, true}, // exact for 64-bit integers
		{`{"big": 9007199254740992}`, false},
		{`{"$or": [{"currency": "USD"}, {"count": {"$gte": 3}}]}`, true},
		{`{"$or": [{"currency": "USD"}, {"count": {"$gte": 4}}]}`, false},
		{`{"$and": [{"currency": "EUR"}, {"customer.tier": {"$in": ["gold", "platinum"]}}]}`, true},
		{`{"$not": {"currency": "EUR"}}`, false},
		{`{"currency": "EUR", "count": 4}`, false}, // every member holds
		{`{"currency": {"$eq": {"$in": 1}}}`, false},
	} {
		if got := match(t, c.filter); got != c.want {
			t.Errorf("%s: %v, want %v", c.filter, got, c.want)
		}
	}
}

func TestParseNamesTheError(t *testing.T) {
	for _, c := range []struct{ filter, path, reason string }{
		{`[1]`, "", "JSON object"},
		{`{"a":`, "", "not valid JSON"},
		{`{} {}`, "", "not valid JSON"},
		{`{"$and": []}`, ".$and", "non-empty array"},
		{`{"$or": [{"a": 1}, 3]}`, ".$or[1]", "JSON object"},
		{`{"$and": [{"x": {"$gt": "10"}}]}`, ".$and[0].x.$gt", "want a number"},
		{`{"x": {"$in": 3}}`, ".x.$in", "array"},
		{`{"x": {"$exists": "yes"}}`, ".x.$exists", "true or false"},
		{`{"x": {"$regex": "a"}}`, ".x.$regex", "unknown operator"},
		{`{"x": {"$gt": 1, "y": 2}}`, ".x.y", "cannot also hold keys"},
		{`{"$where": "1"}`, ".$where", "unknown operator"},
		{`{"a..b": 1}`, `["a..b"]`, "empty key"},
		{`{"x": {"$gt": 1e400}}`, ".x.$gt", "out of range"},
		{`{"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {}}}}}}}}}}}}}}}}}}`, "", "nested deeper"},
	} {
		_, err := filter.Parse([]byte(c.filter))
		var fe *filter.Error
		if !errors.As(err, &fe) || fe.Path != c.path && !(c.path == "" && strings.Contains(c.reason, "nested")) || !strings.Contains(fe.Reason, c.reason) {
			t.Errorf("%s: %v (path %q), want path %q and %q", c.filter, err, pathOf(fe), c.path, c.reason)
		}
	}
	big := `{"$or": [` + strings.Repeat(`{"a": 1},`, filter.MaxConditions) + `{"a": 1}]}`
	if _, err := filter.Parse([]byte(big)); err == nil || !strings.Contains(err.Error(), "conditions") {
		t.Errorf("%d conditions: %v", filter.MaxConditions+2, err)
	}
}

func pathOf(e *filter.Error) string {
	if e == nil {
		return ""
	}
	return e.Path
}

// FuzzParse: filters arrive as JSON from the API. Parse never panics and refuses
// with an *Error; a filter it accepts evaluates on any data without panicking, the
// same way when parsed again.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"currency": {"$in": ["EUR"]}, "amount": {"$gt": 1}}`), []byte(order))
	f.Add([]byte(`{"$or": [{"a.0.b": null}, {"$not": {"c": {"$exists": false}}}]}`), []byte(`{"a": [{"b": null}]}`))
	f.Add([]byte(`{"x": {"$gte": -1e308, "$lt": 1.5}}`), []byte(`{"x": 1}`))
	f.Add([]byte(`{"x": {"$eq": [1, {"y": 2}]}}`), []byte(`[1, 2]`))
	f.Fuzz(func(t *testing.T, raw, data []byte) {
		p, err := filter.Parse(raw)
		if err != nil {
			var fe *filter.Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *filter.Error", err, err)
			}
			return
		}
		v, err := filter.Decode(data)
		if err != nil {
			return
		}
		again, err := filter.Parse(raw)
		if err != nil {
			t.Fatalf("the filter parsed once, not twice: %v", err)
		}
		if p.Match(v) != again.Match(v) {
			t.Fatal("two parses of one filter decide otherwise")
		}
	})
}
