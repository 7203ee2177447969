package verbs_test

import (
	"errors"
	"fmt"

	"github.com/switchboard-voice/switchboard/callctl/verbs"
)

func ExampleDecode() {
	vs, err := verbs.Decode([]byte(`[
	  {"verb":"say","text":"Hi"},
	  {"gather":{"input":["digits"],"actionHook":"/menu","numDigits":1}}
	]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range vs {
		fmt.Println(v.Name(), len(v.Hooks()))
	}
	g := vs[1].(*verbs.Gather)
	fmt.Println(g.ActionHook.URL, g.ActionHook.MethodOrDefault(), g.NumDigits)
	// Output:
	// say 0
	// gather 1
	// /menu POST 1
}

func ExampleValidationError() {
	_, err := verbs.Decode([]byte(`[{"verb":"say","text":"Hi"},{"verb":"gather","actionHook":42}]`))
	var ve *verbs.ValidationError
	if errors.As(err, &ve) {
		fmt.Println(ve.Index, ve.Verb, ve.Field, ve.Reason)
	}
	fmt.Println(errors.Is(err, verbs.ErrInvalidPayload))
	fmt.Println(err)
	// Output:
	// 1 gather actionHook want string or object, got number
	// true
	// invalid-app-payload: verb[1] "gather" field "actionHook": want string or object, got number
}
