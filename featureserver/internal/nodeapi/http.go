package nodeapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// Handler serves mux, on which Register put the API, as the node's HTTP handler: a
// request body without a Content-Type is taken as JSON, and a request that matches
// no route (404) or no method of a route (405) gets a problem document.
//
// A path with a trailing slash is the path without it: @jambonz/node-client lists
// calls and applications at ".../Calls/".
//
// Every request gets a request id, echoed as X-Request-Id (the client's own when it
// sent a sane one), X-Content-Type-Options: nosniff, and one access log line on log
// at info when it is answered: method, path, status, bytes, duration and the id.
func Handler(mux *http.ServeMux, log zerolog.Logger) http.Handler {
	return accessLog(log, trimTrailingSlash(defaultJSON(problemFallback(mux))))
}

// requestIDHeader carries a request's id both ways.
const requestIDHeader = "X-Request-Id"

// accessLog assigns the request id and logs the answered request.
func accessLog(log zerolog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(requestIDHeader)
		if !saneRequestID(id) {
			id = nodestore.NewSid()
		}
		w.Header().Set(requestIDHeader, id)
		// Answers are JSON (or problem documents): no browser may sniff them into
		// anything else.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		ev := log.Info()
		if probes[r.URL.Path] {
			ev = log.Debug() // polled every few seconds: not worth a line each
		}
		ev.Str("request_id", id).Str("method", r.Method).Str("path", r.URL.Path).Int("status", rec.status).
			Int64("bytes", rec.bytes).Dur("duration", time.Since(start)).Str("remote", r.RemoteAddr).Msg("api request")
	})
}

// probes are the paths monitors poll.
var probes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// saneRequestID accepts a client's id of up to 128 printable ASCII characters:
// anything else (a header injection, a log-line bomb) is replaced by our own.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// statusRecorder remembers the status and size of an answer.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// trimTrailingSlash routes "/v1/Accounts/x/Calls/" as "/v1/Accounts/x/Calls" (and
// "/v1/" as "/v1", which no route has).
func trimTrailingSlash(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only the API's own paths: the console lives at /console/, with its slash.
		if p := r.URL.Path; strings.HasPrefix(p, "/v1/") && strings.HasSuffix(p, "/") {
			r2 := r.Clone(r.Context())
			r2.URL.Path = strings.TrimRight(p, "/")
			r2.URL.RawPath = ""
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

// defaultJSON treats a request body without a Content-Type as JSON, as jambonz-style
// API clients (and curl users) often omit it; any other declared type is still
// checked and refused with 415 when it is not JSON.
func defaultJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && r.Header.Get("Content-Type") == "" {
			r.Header.Set("Content-Type", "application/json")
		}
		next.ServeHTTP(w, r)
	})
}

// problemFallback answers requests that match no route (404) or no method of a route
// (405) with an RFC 9457 problem document instead of ServeMux's plain text.
func problemFallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// Let ServeMux decide between 404 and 405 (and the Allow header), then
		// replace its body.
		rec := &statusOnly{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if allow := rec.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		detail := "no such resource: " + r.URL.Path
		if rec.status == http.StatusMethodNotAllowed {
			detail = r.Method + " is not allowed on " + r.URL.Path
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(rec.status)
		_ = json.NewEncoder(w).Encode(map[string]any{"title": http.StatusText(rec.status), "status": rec.status, "detail": detail})
	})
}

// statusOnly records the status and headers a handler writes, and drops its body.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header { return s.header }
func (s *statusOnly) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}
func (s *statusOnly) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return len(b), nil
}
