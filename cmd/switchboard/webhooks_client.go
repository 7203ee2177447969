package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Environment variables of `switchboard webhooks`.
const (
	envAPIURL   = "SWITCHBOARD_URL"
	envAPIToken = "SWITCHBOARD_TOKEN"
)

// apiClient calls a node's outbox API (docs/outbox.md §4) with an account's token.
type apiClient struct {
	base  *url.URL
	token string
	http  *http.Client
}

// problemError is an answer of the API that is not a success: its status and its
// RFC 9457 problem document, as received.
type problemError struct {
	status  int
	problem json.RawMessage
	detail  string
}

func (e *problemError) Error() string { return e.detail }

// newAPIClient checks the API's base URL and token, from the flags or else the
// environment; a missing or bad one is a usage error.
func newAPIClient(c *cli, rawURL, token string) (*apiClient, error) {
	if rawURL == "" {
		rawURL = c.getenv(envAPIURL)
	}
	if token == "" {
		token = c.getenv(envAPIToken)
	}
	if rawURL == "" {
		return nil, usageError("no API URL: give --url or set %s (e.g. http://127.0.0.1:8080)", envAPIURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError("--url %q: want the node's http(s)://host:port", rawURL)
	}
	if token == "" {
		return nil, usageError("no API token: give --token or set %s (the account's api_token)", envAPIToken)
	}
	return &apiClient{base: u, token: token, http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// do sends one request and decodes a 2xx JSON answer into out (when not nil). Any
// other answer is a *problemError; a request that got no answer is an error saying so.
func (a *apiClient) do(ctx context.Context, method, path string, query url.Values, body any, out any) error {
	u := *a.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u.Redacted(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, u.Redacted(), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return newProblem(resp.StatusCode, raw)
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the API's JSON: %w", method, u.Redacted(), err)
	}
	return nil
}

// newProblem reads a problem document into one line naming what was wrong.
func newProblem(status int, raw []byte) *problemError {
	var p struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Errors []struct {
			Location string `json:"location"`
			Message  string `json:"message"`
		} `json:"errors"`
	}
	e := &problemError{status: status, problem: raw}
	if json.Unmarshal(raw, &p) != nil || !json.Valid(raw) {
		e.problem = nil
		e.detail = fmt.Sprintf("HTTP %d: %s", status, strings.TrimSpace(string(raw)))
		return e
	}
	msg := p.Detail
	if msg == "" {
		msg = p.Title
	}
	var parts []string
	for _, d := range p.Errors {
		parts = append(parts, strings.TrimSpace(d.Location+": "+d.Message))
	}
	if len(parts) > 0 {
		msg += " (" + strings.Join(parts, "; ") + ")"
	}
	e.detail = fmt.Sprintf("HTTP %d: %s", status, msg)
	return e
}

// apiFailure is the exit of a failed API call: bad input or credentials (400, 401,
// 422: nothing was done) exit 2, everything else (404, 409, 5xx, no answer) 1. With
// --json the problem document is printed on stdout as well.
func apiFailure(c *cli, asJSON bool, err error) error {
	var p *problemError
	if !errors.As(err, &p) {
		return failure(err)
	}
	if asJSON && p.problem != nil {
		fmt.Fprintln(c.stdout, string(p.problem))
	}
	switch p.status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusUnprocessableEntity:
		return &exitError{code: exitUsage, err: err}
	}
	return failure(err)
}
