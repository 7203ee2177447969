package outbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/switchboard-voice/switchboard/transport"
)

// TestClassOfStatus: every answer is stored under one of the names docs/outbox.md §2
// step 4 gives, any 2xx a success.
func TestClassOfStatus(t *testing.T) {
	for code, want := range map[int]AttemptClass{
		200: ClassSuccess, 201: ClassSuccess, 204: ClassSuccess, 299: ClassSuccess,
		301: ClassRedirect, 308: ClassRedirect, 400: ClassHTTP4xx, 404: ClassHTTP4xx, 410: ClassGone,
		429: ClassThrottled, 500: ClassHTTP5xx, 503: ClassHTTP5xx, 101: ClassNetwork,
	} {
		if got := classOfStatus(code); got != want {
			t.Errorf("classOfStatus(%d) = %s, want %s", code, got, want)
		}
	}
}

// TestClassOfFailure: a request without an answer is a timeout once its deadline
// passed, egress_refused when the rules refused it, network otherwise.
func TestClassOfFailure(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		err      error
		timedOut bool
		want     AttemptClass
	}{
		{refused, false, ClassNetwork},
		{refused, true, ClassTimeout},
		{fmt.Errorf("post: %w", context.DeadlineExceeded), false, ClassTimeout},
		{&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, false, ClassNetwork},
		{fmt.Errorf("dial: %w", transport.ErrEgressRefused), false, ClassEgressRefused},
		{errors.New("malformed HTTP response"), false, ClassNetwork},
	} {
		if got := classOfFailure(tc.err, tc.timedOut); got != tc.want {
			t.Errorf("classOfFailure(%v, timed out %v) = %s, want %s", tc.err, tc.timedOut, got, tc.want)
		}
	}
}
