package webhooksig

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of them, so
// callers test with errors.Is; the wrapped message says which input was wrong.
var (
	// ErrMissingHeaders means webhook-id, webhook-timestamp or webhook-signature is
	// absent or empty.
	ErrMissingHeaders = errors.New("webhooksig: missing webhook headers")
	// ErrMalformedHeader means a webhook header is present but cannot be read: a
	// timestamp that is not a decimal number of seconds, an id with forbidden
	// characters, a signature header without one well-formed entry, or a
	// Jambonz-Signature that is not "t=<unix>,v1=<hex>".
	ErrMalformedHeader = errors.New("webhooksig: malformed webhook header")
	// ErrInvalidSignature means no signature in the header matched any key of the
	// Verifier (or any Jambonz-Signature secret): the body, id or timestamp was
	// altered, or the keys differ.
	ErrInvalidSignature = errors.New("webhooksig: no matching signature")
	// ErrTimestampTooOld means webhook-timestamp (or Jambonz-Signature's t=) is
	// further in the past than the tolerance (a replay or a badly delayed message).
	ErrTimestampTooOld = errors.New("webhooksig: timestamp too old")
	// ErrTimestampTooNew means webhook-timestamp (or Jambonz-Signature's t=) is
	// further in the future than the tolerance.
	ErrTimestampTooNew = errors.New("webhooksig: timestamp too new")
	// ErrMalformedSecret means an encoded secret or key has the wrong prefix, is not
	// canonical standard base64, or decodes to the wrong length.
	ErrMalformedSecret = errors.New("webhooksig: malformed secret")
	// ErrNoKeys means a Signer or Verifier holds no key at all (or a zero one), or
	// a Jambonz-Signature check was given no secret or an empty one, with which
	// anyone could sign.
	ErrNoKeys = errors.New("webhooksig: no keys")
	// ErrInvalidID means Sign was given an empty webhook id or one with a character
	// outside visible ASCII, or a full stop (the spec forbids "." so the signed content
	// cannot be re-split).
	ErrInvalidID = errors.New("webhooksig: invalid webhook id")
	// ErrInvalidTimestamp means Sign was given a time before the Unix epoch, which the
	// webhook-timestamp header cannot carry.
	ErrInvalidTimestamp = errors.New("webhooksig: invalid timestamp")
)
