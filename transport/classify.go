package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"syscall"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/retry"
)

// ErrBodyTooLarge is returned when a response body exceeds the configured cap.
var ErrBodyTooLarge = errors.New("response body exceeds the size limit")

// ErrBodyRejected wraps the error of a HookRequest's Accept: a 2xx answer whose body
// the caller cannot use (retry.Unparseable).
var ErrBodyRejected = errors.New("response body rejected")

// ErrBodyTimeout: the response headers arrived but the body did not within the hook
// timeout. It is class rt, like headers that never come.
var ErrBodyTimeout = errors.New("response body not received in time")

// Classify maps the error of one attempt to its retry class, by type (errors.Is/As),
// never by message:
//
//   - nil: retry.Success.
//   - an egress refusal (ErrEgressRefused): retry.EgressRefused.
//   - context.Canceled: retry.Canceled (the caller gave up).
//   - a certificate that does not verify, NXDOMAIN, a malformed URL: retry.Permanent.
//   - anything inside a *ConnectError (lookup, TCP connect, TLS handshake, including
//     their timeouts and temporary DNS failures), and refused, reset or aborted
//     connections or EOF before any response: retry.Connect.
//   - a timeout after the connection was up (no response headers in time):
//     retry.ResponseTimeout.
//   - ErrBodyTooLarge, ErrBodyRejected, a truncated or malformed response:
//     retry.Unparseable.
//
// A caller whose own context deadline expired should check ctx.Err() first: the
// standard library reports dial and header timeouts as context.DeadlineExceeded too.
func Classify(err error) retry.Class {
	if err == nil {
		return retry.Success
	}
	if errors.Is(err, ErrEgressRefused) {
		return retry.EgressRefused
	}
	if errors.Is(err, context.Canceled) {
		return retry.Canceled
	}
	if isCertificateError(err) || isMalformedURL(err) {
		return retry.Permanent
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return retry.Permanent
		}
		return retry.Connect
	}
	var ce *ConnectError
	if errors.As(err, &ce) {
		var rh tls.RecordHeaderError
		if errors.As(err, &rh) {
			// The peer does not speak TLS: an answer, but not a valid one.
			return retry.Unparseable
		}
		return retry.Connect
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, io.EOF):
		// After connecting, before any response: the peer dropped us.
		return retry.Connect
	case errors.Is(err, ErrBodyTooLarge), errors.Is(err, ErrBodyRejected), errors.Is(err, io.ErrUnexpectedEOF):
		return retry.Unparseable
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return retry.ResponseTimeout
	}
	return retry.Unparseable
}

func isCertificateError(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		insecure x509.InsecureAlgorithmError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) ||
		errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &insecure)
}

func isMalformedURL(err error) bool {
	if errors.Is(err, fragment.ErrInvalidURL) || errors.Is(err, ErrInvalidRequest) {
		return true
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Op == "parse" {
		return true
	}
	var (
		escape  url.EscapeError
		badHost url.InvalidHostError
	)
	return errors.As(err, &escape) || errors.As(err, &badHost)
}
