// Package webhooksig signs and verifies webhooks, and parses their keys and signature
// headers, for the two schemes Switchboard sends.
//
// Jambonz-Signature (docs/call-control.md §3) signs call-control webhooks with the
// account's plain webhook secret: "t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
// "<t>.<body>")>". SignJambonz writes it, VerifyJambonz checks it against one secret and
// MatchJambonz against several (key rotation), saying which one matched.
//
// Standard Webhooks (https://www.standardwebhooks.com, spec version 1.0.0) signs the
// outbox's deliveries. A signature covers "{webhook-id}.{webhook-timestamp}.{body}" and
// travels in three headers: webhook-id, webhook-timestamp (Unix seconds) and
// webhook-signature, a space-separated list of "version,base64" entries. Two schemes
// exist:
//
//   - v1: HMAC-SHA256 with a shared secret serialized as "whsec_" + base64.
//   - v1a: ed25519; the sender holds "whsk_" + base64(seed), the receiver
//     "whpk_" + base64(public key).
//
// A Signer with several keys (the old and the new one during key rotation) puts one
// signature per key into the single webhook-signature header; a Verifier accepts the
// message when any listed signature matches any of its keys and the timestamp is within
// its tolerance (300 s by default) of its clock, and Verifier.Matches says which keys
// matched.
//
// Every error wraps one of the sentinels in errors.go, whichever the scheme. The package
// owns the cryptography, the key formats and the header formats only. It does not send
// requests (package transport and the outbox do), store secrets, or remember webhook ids
// to reject replays inside the tolerance window; that is the receiver's job.
package webhooksig
