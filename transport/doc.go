// Package transport owns everything that leaves the node: the egress rules and the
// dialer that enforces them on the exact IP connected (NewDialer, NewHTTPClient), the
// classification of Go errors into retry classes (Classify), and the HTTP hook client
// built on go-retryablehttp (HookClient), which signs its requests with
// Jambonz-Signature through package webhooksig.
//
// Retry decisions are not made here: they come from package retry, with the policy
// from package fragment. Signing and verifying (Jambonz-Signature and Standard
// Webhooks) live in transport/webhooksig, the WebSocket client in transport/wsclient,
// and the fault-injecting test servers in transport/transporttest. This package knows
// nothing of calls, verbs or storage.
package transport
