package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-voice/switchboard/internal/jsjson"
)

// ErrInvalidRequest is wrapped by errors about a request that cannot be sent as
// given (no URL, a payload that does not encode, a method other than POST or GET).
// Nothing is sent.
var ErrInvalidRequest = errors.New("invalid request")

// encodePayload renders a hook payload as JSON, written as JavaScript's
// JSON.stringify writes it (jambonz's bodies are its output: no HTML escaping, keys in
// JavaScript's order), so that a verifier that re-serialises the parsed body gets the
// bytes that were signed (docs/call-control.md §3). json.RawMessage and []byte are
// taken as already-encoded JSON, as they are (they must be valid); nil becomes "{}".
func encodePayload(p any) ([]byte, error) {
	switch v := p.(type) {
	case nil:
		return []byte("{}"), nil
	case json.RawMessage:
		return validJSON(v)
	case []byte:
		return validJSON(v)
	default:
		b, err := jsjson.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: payload does not encode as JSON: %v", ErrInvalidRequest, err)
		}
		return b, nil
	}
}

func validJSON(b []byte) ([]byte, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return []byte("{}"), nil
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("%w: payload is not valid JSON", ErrInvalidRequest)
	}
	return b, nil
}

// QueryFields turns a JSON object into query parameters for a GET hook: strings as
// they are, numbers and booleans as their JSON text, objects and arrays as compact
// JSON, nulls left out. Anything but an object (or null) is an error.
func QueryFields(body []byte) (url.Values, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("%w: a GET payload must be a JSON object: %v", ErrInvalidRequest, err)
	}
	q := url.Values{}
	for k, raw := range fields {
		raw = bytes.TrimSpace(raw)
		switch {
		case bytes.Equal(raw, []byte("null")):
			continue
		case len(raw) > 0 && raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("%w: field %q: %v", ErrInvalidRequest, k, err)
			}
			q.Add(k, s)
		default:
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return nil, fmt.Errorf("%w: field %q: %v", ErrInvalidRequest, k, err)
			}
			q.Add(k, buf.String())
		}
	}
	return q, nil
}

// requestShape is what is sent, computed once per hook request.
type requestShape struct {
	method string
	url    string
	body   []byte // nil for GET; the signature then covers the empty body
}

func shapeRequest(hr HookRequest) (requestShape, error) {
	if hr.Target.URL == nil {
		return requestShape{}, fmt.Errorf("%w: no target URL", ErrInvalidRequest)
	}
	u := *hr.Target.URL
	// The fragment carries the retry policy and is never sent.
	u.Fragment, u.RawFragment = "", ""
	body, err := encodePayload(hr.Payload)
	if err != nil {
		return requestShape{}, err
	}
	switch strings.ToUpper(hr.Method) {
	case "", http.MethodPost:
		return requestShape{method: http.MethodPost, url: u.String(), body: body}, nil
	case http.MethodGet:
		q, err := QueryFields(body)
		if err != nil {
			return requestShape{}, err
		}
		if enc := q.Encode(); enc != "" {
			// Appended, so the URL's own parameters stay exactly as the app wrote them.
			if u.RawQuery != "" {
				u.RawQuery += "&" + enc
			} else {
				u.RawQuery = enc
			}
		}
		u.ForceQuery = false
		return requestShape{method: http.MethodGet, url: u.String()}, nil
	default:
		return requestShape{}, fmt.Errorf("%w: method %q (want POST or GET)", ErrInvalidRequest, hr.Method)
	}
}
