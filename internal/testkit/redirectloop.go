package testkit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// RedirectLoop is an HTTP application that answers every hook with a redirect to
// /loop, itself: only a call's request limit ends a call to it. Start calls at
// URL + "/loop".
type RedirectLoop struct {
	URL  string
	hits atomic.Int64
}

// NewRedirectLoop starts a RedirectLoop, closed when t ends.
func NewRedirectLoop(t testing.TB) *RedirectLoop {
	app := &RedirectLoop{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		app.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"verb":"redirect","actionHook":"/loop"}]`)
	}))
	t.Cleanup(srv.Close)
	app.URL = srv.URL
	return app
}

// Hits is how many requests the application has had.
func (a *RedirectLoop) Hits() int { return int(a.hits.Load()) }
