package main

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

// Environment variables of `switchboard webhooks`.
const (
	envAPIURL   = "SWITCHBOARD_URL"
	envAPIToken = "SWITCHBOARD_TOKEN"
)

// newAPIClient is the client of a node's outbox API (docs/outbox.md §4) at the URL
// and with the token of the flags, else of the environment; a missing or bad one is
// a usage error.
func newAPIClient(c *cli, rawURL, token string) (*outboxapi.Client, error) {
	if rawURL == "" {
		rawURL = c.getenv(envAPIURL)
	}
	if token == "" {
		token = c.getenv(envAPIToken)
	}
	if rawURL == "" {
		return nil, usageError("no API URL: give --url or set %s (e.g. http://127.0.0.1:8080)", envAPIURL)
	}
	api, err := outboxapi.NewClient(rawURL, token, nil)
	if err != nil {
		return nil, usageError("--url %q: want the node's http(s)://host:port", rawURL)
	}
	if token == "" {
		return nil, usageError("no API token: give --token or set %s (the account's api_token)", envAPIToken)
	}
	return api, nil
}

// apiFailure is the exit of a failed API call: bad input or credentials (400, 401,
// 422: nothing was done) exit 2, everything else (404, 409, 5xx, no answer) 1. With
// --json the problem document is printed on stdout as well.
func apiFailure(c *cli, asJSON bool, err error) error {
	var p *outboxapi.ProblemError
	if !errors.As(err, &p) {
		return failure(err)
	}
	if asJSON && p.Problem != nil {
		fmt.Fprintln(c.stdout, string(p.Problem))
	}
	switch p.Status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusUnprocessableEntity:
		return &exitError{code: exitUsage, err: err}
	}
	return failure(err)
}
