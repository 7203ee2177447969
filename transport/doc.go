// Package transport owns everything that leaves the node: the egress rules and the
// dialer that enforces them on the exact IP connected (NewDialer, NewHTTPClient),
// the classification of Go errors into retry classes (Classify), the HTTP hook
// client built on go-retryablehttp (HookClient) with its Jambonz-Signature signing
// (SignJambonz, VerifyJambonz).
//
// Retry decisions are not made here: they come from package retry, with the policy
// from package fragment. The WebSocket client lives in transport/wsclient, Standard
// Webhooks signing in transport/webhooksig, and the fault-injecting test server in
// transport/transporttest. This package knows nothing of calls, verbs or storage.
package transport
