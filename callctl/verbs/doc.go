// Package verbs is the jambonz verb model: it decodes the JSON verb arrays an application
// returns (from an HTTP hook or in a WebSocket ack or command) into typed values and
// validates them against the jambonz verb specifications, so that an unknown verb, an
// unknown property, a value of the wrong type or a missing required property becomes an
// invalid-app-payload error naming the verb and the field instead of a crash later.
//
// Both shapes jambonz accepts are decoded: {"verb":"say","text":"hi"} and
// {"say":{"text":"hi"}}; "stream" is an alias of "listen". Hooks may be a URL string or an
// object. Decoding bounds its work (payload size, nesting depth, number of verbs) and
// never panics. Encode writes verbs back in the {"verb":...} shape so that decoding the
// result yields the same values.
//
// It owns the shape of verbs (docs/call-control.md §8), not their execution: running
// a verb, simulating media and calling hooks is package callctl's job.
package verbs
