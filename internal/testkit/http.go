package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// JSONRequest is a request of method to url as the module's API clients send one:
// body, unless nil, goes as written when a string or a []byte and JSON-encoded
// otherwise, with the JSON Content-Type; token, unless empty, goes as a bearer token.
func JSONRequest(method, url, token string, body any) (*http.Request, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req, nil
}

// Exchange sends req with http.DefaultClient and returns the response with its whole
// body, read and closed.
func Exchange(req *http.Request) (*http.Response, []byte, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp, raw, err
}

// DoJSON sends JSONRequest(method, url, token, body), with header's fields added,
// and returns the response with its whole body; a 2xx answer is decoded into out
// when out is not nil. A request that cannot be built or sent, or an answer out
// cannot hold, fails t.
func DoJSON(t testing.TB, method, url, token string, body any, header http.Header, out any) (*http.Response, []byte) {
	t.Helper()
	req, err := JSONRequest(method, url, token, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, raw, err := Exchange(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, url, raw, err)
		}
	}
	return resp, raw
}
