package testkit

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCancelAfterArrival(t *testing.T) {
	arrived := make(chan struct{}, 1)
	inBase := make(chan context.Context)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		inBase <- r.Context()
		<-r.Context().Done()
		return nil, r.Context().Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.invalid/", nil)
	if err != nil {
		t.Fatal(err)
	}
	type result struct{ err error }
	done := make(chan result)
	go func() {
		// No limit that a stalled test could reach: only the arrival releases it.
		_, err := cancelAfterArrival{base, arrived, time.Hour}.RoundTrip(req)
		done <- result{err}
	}()
	inner := <-inBase
	cancel()
	// The request's own context ended, but nothing arrived: the base still carries it.
	select {
	case <-inner.Done():
		t.Fatal("the cancellation reached the base before the arrival")
	default:
	}
	arrived <- struct{}{}
	if r := <-done; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("round trip: %v, want the cancellation passed on", r.err)
	}
}
