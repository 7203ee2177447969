package testkit

import (
	"context"
	"net/http"
	"time"
)

// arrivalLimit bounds how long a round trip of CancelAfterArrival waits for its
// arrival: past it the test's peer never got the request, which the test reports.
const arrivalLimit = 10 * time.Second

// CancelAfterArrival wraps base so that the end of a request's context (its
// deadline, a cancellation) reaches base only once the test's peer has the request:
// each round trip waits for one value on arrived, which the peer sends when it has
// accepted the connection or read the request. A test whose peer never answers then
// sees the client's own short timeout fire after the peer got the request however
// slowly the machine runs, instead of racing the connect and the TLS handshake:
// the timeout is certain, only when it fires varies. Round trips must be sequential,
// one arrival each; one that fails without its arrival waits for it (arrivalLimit
// at most) so that a late arrival is never taken for the next one's.
func CancelAfterArrival(base http.RoundTripper, arrived <-chan struct{}) http.RoundTripper {
	return cancelAfterArrival{base, arrived, arrivalLimit}
}

type cancelAfterArrival struct {
	base    http.RoundTripper
	arrived <-chan struct{}
	limit   time.Duration
}

func (c cancelAfterArrival) RoundTrip(req *http.Request) (*http.Response, error) {
	outer := req.Context()
	inner, cancel := context.WithCancel(context.WithoutCancel(outer))
	got := make(chan struct{})
	go func() {
		defer close(got)
		select {
		case <-c.arrived:
		case <-time.After(c.limit):
		}
	}()
	context.AfterFunc(outer, func() {
		<-got
		cancel()
	})
	resp, err := c.base.RoundTrip(req.WithContext(inner))
	if err != nil {
		<-got
		cancel()
	}
	return resp, err
}
