package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/outbox/internal/schema"
)

const invoice = `{"type": "object", "required": ["amount", "lines"],
	"properties": {
		"amount": {"type": "number", "minimum": 0},
		"email": {"type": "string", "format": "email"},
		"lines": {"type": "array", "items": {"type": "object", "required": ["sku"],
			"properties": {"sku": {"type": "string", "pattern": "^[A-Z]{2}[0-9]+$"}, "a.b": {"type": "integer"}}}}
	}}`

func TestValidateNamesTheFirstError(t *testing.T) {
	s, err := schema.Compile([]byte(invoice))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ data, path, reason string }{
		{`{"amount": 10, "lines": [{"sku": "AB12"}]}`, "", ""},
		{`{"amount": -1, "lines": []}`, ".amount", "minimum"},
		{`{"amount": 1}`, "", "missing property 'lines'"},
		{`{"amount": 1, "lines": [{"sku": "AB1"}, {"sku": "x"}]}`, ".lines[1].sku", "does not match pattern"},
		{`{"amount": 1, "lines": [{"sku": "AB1", "a.b": 1.5}]}`, `.lines[0]["a.b"]`, "want integer"},
		{`{"amount": 1, "lines": [], "email": "nobody"}`, ".email", "not valid email"},
		{`[]`, "", "want object"},
	} {
		data, err := schema.Decode([]byte(c.data))
		if err != nil {
			t.Fatal(err)
		}
		e := s.Validate(data)
		if c.reason == "" {
			if e != nil {
				t.Errorf("%s: %v", c.data, e)
			}
			continue
		}
		if e == nil || e.Path != c.path || !strings.Contains(e.Reason, c.reason) {
			t.Errorf("%s: %v, want %q at %q", c.data, e, c.reason, c.path)
		}
	}
}

func TestCompileNamesTheError(t *testing.T) {
	for _, c := range []struct{ schema, path, reason string }{
		{`{"type": "object", "properties": {"a": {"type": "numbr"}}}`, ".properties.a.type", ""},
		{`{"minimum": "0"}`, ".minimum", "want number"},
		{`[]`, "", "JSON object"},
		{`{"type": `, "", "not valid JSON"},
		{`{"$ref": "file:///etc/passwd"}`, "", "not loaded"},
		{`{"$ref": "https://example.com/s.json"}`, "", "not loaded"},
		{`{"pattern": "(?<=a)b"}`, ".pattern", ""},
	} {
		_, err := schema.Compile([]byte(c.schema))
		var se *schema.Error
		if !errors.As(err, &se) || se.Path != c.path || !strings.Contains(se.Reason, c.reason) {
			t.Errorf("%s: %v, want path %q and %q", c.schema, err, c.path, c.reason)
		}
	}
	if _, err := schema.Compile([]byte(`true`)); err != nil {
		t.Errorf("true: %v", err)
	}
}

// FuzzCompile: schemas arrive as JSON from the API. Compile never panics and refuses
// with an *Error; a schema it accepts validates any data without panicking.
func FuzzCompile(f *testing.F) {
	f.Add([]byte(invoice), []byte(`{"amount": 1, "lines": [{"sku": "AB1"}]}`))
	f.Add([]byte(`{"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`), []byte(`1`))
	f.Add([]byte(`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]}`), []byte(`["x", 2]`))
	f.Add([]byte(`{"anyOf": [{"const": 1}, {"enum": [2, "3"]}], "not": {"multipleOf": 0.5}}`), []byte(`1.25`))
	f.Fuzz(func(t *testing.T, raw, data []byte) {
		s, err := schema.Compile(raw)
		if err != nil {
			var se *schema.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *schema.Error", err, err)
			}
			return
		}
		v, err := schema.Decode(data)
		if err != nil {
			return
		}
		_ = s.Validate(v)
	})
}
