package nodeapi

import (
	"encoding/json"
	"errors"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"
)

// The request forms of jambonz's REST API (jambonz-api-server's swagger, and what
// @jambonz/node-client sends): a call's `to` is a target object, and a hook is a URL
// string or a webhook object. Each takes either form of a oneOf; a value that
// matches neither gets the errors of the object form (refineOneOf), so a problem
// names the field at fault (body.to.type), not only the oneOf.

// callTarget is jambonz's Target: where an outbound call goes.
type callTarget struct {
	Type       string      `json:"type" enum:"phone,sip,user,teams" doc:"phone: number; sip: sipUri; user: name (a registered SIP user); teams: number"`
	Number     string      `json:"number,omitempty" maxLength:"256"`
	SipURI     string      `json:"sipUri,omitempty" maxLength:"512"`
	Name       string      `json:"name,omitempty" maxLength:"256"`
	Tenant     string      `json:"tenant,omitempty" maxLength:"256" doc:"Accepted, ignored: Microsoft Teams tenant"`
	Trunk      string      `json:"trunk,omitempty" maxLength:"256" doc:"Accepted, ignored: the node places no SIP call"`
	Vmail      bool        `json:"vmail,omitempty" doc:"Accepted, ignored"`
	OverrideTo string      `json:"overrideTo,omitempty" maxLength:"256" doc:"Accepted, ignored"`
	Auth       *targetAuth `json:"auth,omitempty" doc:"Accepted, ignored: SIP digest credentials"`
}

type targetAuth struct {
	Username string `json:"username,omitempty" maxLength:"256"`
	Password string `json:"password,omitempty" maxLength:"256"`
}

// address is the target as the call's `to` (what its hooks carry): the number,
// SIP URI or user name its type names, and the field that must hold it.
func (t callTarget) address() (value, field string) {
	switch t.Type {
	case "sip":
		return t.SipURI, "sipUri"
	case "user":
		return t.Name, "name"
	default: // phone, teams
		return t.Number, "number"
	}
}

// callTo is a call's `to`: jambonz's target object, or (the node's earlier form) a
// string taken as a phone number.
type callTo struct{ callTarget }

// Schema is the oneOf of a phone number string and the Target object.
func (callTo) Schema(r huma.Registry) *huma.Schema {
	return stringOrObjectSchema[callTarget](r, 256, "a phone number (the node's earlier form)", "Target")
}

// UnmarshalJSON takes either form.
func (t *callTo) UnmarshalJSON(b []byte) error {
	return unmarshalStringOrObject(b, &t.callTarget, func(number string) callTarget {
		return callTarget{Type: "phone", Number: number}
	})
}

// hookRef is a hook as jambonz takes it: a URL string (POST) or a webhook object.
type hookRef struct{ hookBody }

// Schema is the oneOf of a URL string and the Webhook object.
func (hookRef) Schema(r huma.Registry) *huma.Schema {
	return stringOrObjectSchema[hookBody](r, 2048, "the URL, requested with POST", "Webhook")
}

// UnmarshalJSON takes either form.
func (h *hookRef) UnmarshalJSON(b []byte) error {
	return unmarshalStringOrObject(b, &h.hookBody, func(url string) hookBody { return hookBody{URL: url} })
}

// stringOrObjectSchema is the oneOf of a non-empty string of at most maxLength
// bytes, described as stringMeans, and the object T under the name object.
func stringOrObjectSchema[T any](r huma.Registry, maxLength int, stringMeans, object string) *huma.Schema {
	return &huma.Schema{OneOf: []*huma.Schema{
		{Type: huma.TypeString, MinLength: ptr(1), MaxLength: ptr(maxLength), Description: stringMeans},
		r.Schema(reflect.TypeFor[T](), true, object),
	}}
}

// unmarshalStringOrObject decodes b into obj: a JSON string through fromString,
// anything else as the object itself.
func unmarshalStringOrObject[T any](b []byte, obj *T, fromString func(string) T) error {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		*obj = fromString(str)
		return nil
	}
	return json.Unmarshal(b, obj)
}

// MarshalJSON writes the object form.
func (h hookRef) MarshalJSON() ([]byte, error) { return json.Marshal(h.hookBody) }

func ptr[T any](v T) *T { return &v }

// intBool is a jambonz boolean setting, which its API server stores as a tinyint and
// clients send either as true/false or as 0/1.
type intBool bool

// Schema is the oneOf of a boolean and the integers 0 and 1.
func (intBool) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{OneOf: []*huma.Schema{
		{Type: huma.TypeBoolean},
		{Type: huma.TypeInteger, Minimum: ptr(0.0), Maximum: ptr(1.0), Description: "0: false, 1: true"},
	}}
}

// UnmarshalJSON takes either form.
func (f *intBool) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v {
	case true, 1.0:
		*f = true
	case false, 0.0:
		*f = false
	default:
		return errors.New("expected a boolean, 0 or 1")
	}
	return nil
}

// oneOfObjects are the object forms of the request fields that take a oneOf, by
// the location the validator reports, with the registry that resolves them.
var oneOfObjects = func() map[string]*huma.Schema {
	r := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	hook := r.Schema(reflect.TypeFor[hookBody](), false, "")
	oneOfRegistry = r
	return map[string]*huma.Schema{
		"body.to":               r.Schema(reflect.TypeFor[callTarget](), false, ""),
		"body.call_hook":        hook,
		"body.call_status_hook": hook,
	}
}()

var oneOfRegistry huma.Registry

// refineOneOf replaces a oneOf mismatch of a known field whose value is an object
// with the errors of the object's own schema: "body.call_hook.url: expected
// string" rather than "matched none".
func refineOneOf(details []*huma.ErrorDetail) []*huma.ErrorDetail {
	out := make([]*huma.ErrorDetail, 0, len(details))
	for _, d := range details {
		if d == nil {
			continue
		}
		s, known := oneOfObjects[d.Location]
		obj, isObject := d.Value.(map[string]any)
		if !known || !isObject || d.Message != validation.MsgExpectedMatchExactlyOneSchema {
			out = append(out, d)
			continue
		}
		res := &huma.ValidateResult{}
		huma.Validate(oneOfRegistry, s, huma.NewPathBuffer([]byte(d.Location), 0), huma.ModeWriteToServer, obj, res)
		if len(res.Errors) == 0 {
			out = append(out, d)
			continue
		}
		for _, e := range res.Errors {
			var ed *huma.ErrorDetail
			if asDetail, ok := e.(*huma.ErrorDetail); ok {
				ed = asDetail
			} else {
				ed = &huma.ErrorDetail{Location: d.Location, Message: e.Error()}
			}
			out = append(out, ed)
		}
	}
	return out
}
