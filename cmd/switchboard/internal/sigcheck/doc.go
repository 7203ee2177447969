// Package sigcheck is what `switchboard verify` does: check the signature of a
// received webhook (Check), Standard Webhooks (v1 secrets, v1a public keys, rotation)
// or Jambonz-Signature, picked from the headers present (PickScheme), and say why
// one does not verify in terms a developer can act on (Verdict's hints: a trailing
// newline, a timestamp outside the tolerance and which way); and read the headers as
// they were pasted from a request dump or given as curl's -H (CollectHeaders).
//
// Signing and verifying themselves are transport/webhooksig's; this package turns
// its answers into the command's verdict. Its JSON is the command's stable output.
package sigcheck
