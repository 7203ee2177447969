package nodeapi

import (
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Problem documents name the rejected value, except where it would echo a secret:
// the validator puts a whole object in value when the object itself is rejected (an
// unknown property), and an application's hook object carries its password.
func init() {
	newError := huma.NewError
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		err := newError(status, msg, errs...)
		if model, ok := err.(*huma.ErrorModel); ok {
			model.Errors = refineOneOf(model.Errors)
			for _, d := range model.Errors {
				if d == nil {
					continue
				}
				if !safeToEcho(d.Location, d.Value) {
					d.Value = nil
				}
				if v, ok := d.Value.(string); ok && len(v) > maxErrorValue {
					d.Value = strings.ToValidUTF8(v[:maxErrorValue], "") + "…"
				}
			}
		}
		return err
	}
}

// safeToEcho reports whether a rejected value may appear in a problem document: a
// scalar that is not a password or a token, nor the whole request body (which huma
// echoes when it cannot parse it: 256 KiB of it, once).
func safeToEcho(location string, value any) bool {
	if value == nil {
		return true
	}
	if location == "body" {
		return false
	}
	switch reflect.ValueOf(value).Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Struct, reflect.Pointer:
		return false
	}
	field := strings.ToLower(location[strings.LastIndexByte(location, '.')+1:])
	return !strings.Contains(field, "password") && !strings.Contains(field, "secret") && !strings.Contains(field, "token")
}

// maxErrorValue bounds the characters of a value a problem document echoes: a
// longer string is cut to them.
const maxErrorValue = 100
