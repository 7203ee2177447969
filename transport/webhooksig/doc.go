// Package webhooksig signs and verifies webhooks the Standard Webhooks way
// (https://www.standardwebhooks.com, spec version 1.0.0).
//
// A signature covers the content "{webhook-id}.{webhook-timestamp}.{body}" and travels
// in three headers: webhook-id, webhook-timestamp (Unix seconds) and webhook-signature,
// a space-separated list of "version,base64" entries. Two schemes exist:
//
//   - v1: HMAC-SHA256 with a shared secret serialized as "whsec_" + base64.
//   - v1a: ed25519; the sender holds "whsk_" + base64(seed), the receiver
//     "whpk_" + base64(public key).
//
// A Signer with several keys (the old and the new one during key rotation) puts one
// signature per key into the single webhook-signature header; a Verifier accepts the
// message when any listed signature matches any of its keys and the timestamp is within
// its tolerance (300 s by default) of its clock.
//
// The package owns the cryptography and the header format only. It does not send
// requests (package transport and the outbox do), store secrets, or remember webhook ids
// to reject replays inside the tolerance window; that is the receiver's job.
package webhooksig
