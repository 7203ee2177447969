package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodeapi"
)

// apiClient calls the node's API in-process, through its http.Handler, as a
// signed-in session's account (nodeapi.Caller), or with an API token (the sign-in's
// check): the console sees exactly what a CLI or a script sees.
type apiClient struct {
	h      http.Handler
	token  string
	caller *nodeapi.Caller
}

// apiError is a problem document the API answered (RFC 9457).
type apiError struct {
	Status int    `json:"status"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Errors []struct {
		Message  string `json:"message"`
		Location string `json:"location"`
	} `json:"errors"`
}

func (e *apiError) Error() string {
	msg := e.Detail
	if msg == "" {
		msg = e.Title
	}
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	var parts []string
	for _, d := range e.Errors {
		parts = append(parts, strings.TrimPrefix(d.Location+": ", ": ")+d.Message)
	}
	if len(parts) > 0 {
		msg += " (" + strings.Join(parts, "; ") + ")"
	}
	return msg
}

// statusOf is the HTTP status an error of the API stands for: 200 for none, 500 for
// anything else.
func statusOf(err error) int {
	if err == nil {
		return http.StatusOK
	}
	if e, ok := err.(*apiError); ok {
		return e.Status
	}
	return http.StatusInternalServerError
}

// recorder collects what the API's handler writes.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// do sends method path?query with body (JSON, when not nil) and decodes a 2xx answer
// into out (when not nil); any other answer is an *apiError.
func (c apiClient) do(ctx context.Context, method, path string, query url.Values, body, out any) (http.Header, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	if c.caller != nil {
		ctx = nodeapi.WithCaller(ctx, *c.caller)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	req.RemoteAddr = "127.0.0.1:0" // in-process
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	rec := &recorder{header: http.Header{}}
	c.h.ServeHTTP(rec, req)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	if rec.code >= 300 {
		e := &apiError{Status: rec.code}
		if json.Unmarshal(rec.body.Bytes(), e) != nil || e.Status == 0 {
			e.Status = rec.code
		}
		return rec.header, e
	}
	if out != nil && rec.body.Len() > 0 {
		if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
			return rec.header, fmt.Errorf("console: decoding %s %s: %w", method, path, err)
		}
	}
	return rec.header, nil
}

func (c apiClient) get(ctx context.Context, path string, query url.Values, out any) (http.Header, error) {
	return c.do(ctx, http.MethodGet, path, query, nil, out)
}

// esc escapes one path segment.
func esc(s string) string { return url.PathEscape(s) }
