package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// MaxBytes bounds a schema's JSON.
const MaxBytes = 64 << 10

// Error is a schema refused by Compile, or data refused by Validate: Path is where
// (in the schema, or in the data) in the API's notation ("" for the whole value,
// then ".key" or "[i]", `["a.b"]` for a key that is not a plain name), Reason why.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

// Schema is a compiled schema, safe for concurrent use.
type Schema struct{ s *jsonschema.Schema }

var printer = message.NewPrinter(language.English)

// noLoader refuses every reference outside the schema: a schema is an account's
// input, and must not make the node read a file or dial a URL.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("references outside the schema are not loaded (%s)", url)
}

// resource is the URL the schema is compiled under: its own references resolve
// against it.
const resource = "urn:switchboard:event-type-schema"

// Compile checks raw against its draft's meta-schema and compiles it. A schema
// refused is an *Error naming the place in it.
func Compile(raw []byte) (*Schema, error) {
	if len(raw) > MaxBytes {
		return nil, &Error{Reason: fmt.Sprintf("larger than %d bytes", MaxBytes)}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &Error{Reason: "not valid JSON: " + err.Error()}
	}
	switch doc.(type) {
	case map[string]any, bool:
	default:
		return nil, &Error{Reason: "a schema is a JSON object (or true or false)"}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(resource, doc); err != nil {
		return nil, &Error{Reason: err.Error()}
	}
	s, err := c.Compile(resource)
	if err != nil {
		return nil, compileError(err, doc)
	}
	return &Schema{s: s}, nil
}

// compileError is the *Error of a schema Compile refused.
func compileError(err error, doc any) error {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			return first(ve, doc)
		}
	}
	msg := err.Error()
	msg = strings.ReplaceAll(msg, resource, "the schema")
	return &Error{Reason: msg}
}

// Decode reads data as Validate takes it (numbers kept exact).
func Decode(data []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// Validate checks data (as Decode returns it) and returns the first error, nil when
// it passes.
func (s *Schema) Validate(data any) *Error {
	err := s.s.Validate(data)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return first(ve, data)
	}
	return &Error{Reason: err.Error()}
}

// first is the first leaf of a validation error's tree: the most precise place.
func first(ve *jsonschema.ValidationError, doc any) *Error {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return &Error{Path: Path(ve.InstanceLocation, doc), Reason: ve.ErrorKind.LocalizedString(printer)}
}

// Path writes a location in v (a JSON Pointer's tokens) as the API names places:
// ".key" or `["a.b"]` in an object, "[i]" in an array.
func Path(tokens []string, v any) string {
	var b strings.Builder
	for _, tok := range tokens {
		if arr, ok := v.([]any); ok {
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(arr) {
				v = arr[i]
			} else {
				v = nil
			}
			continue
		}
		if tok != "" && !strings.ContainsAny(tok, `.[]"\ `) {
			b.WriteString("." + tok)
		} else {
			b.WriteString("[" + strconv.Quote(tok) + "]")
		}
		if obj, ok := v.(map[string]any); ok {
			v = obj[tok]
		} else {
			v = nil
		}
	}
	return b.String()
}
