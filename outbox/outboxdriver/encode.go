package outboxdriver

import (
	"encoding/json"
	"fmt"
)

// The routing fields of endpoints and events are stored as text the stores share:
// JSON for headers, channels and exclusions (empty for none), the filter as given.
// An empty map or list reads back as nil, so that a row read after writing it equals
// what was written.

// EncodeRouting returns ep's headers, channels and filter as the stores keep them.
func EncodeRouting(ep Endpoint) (headers, channels, filter string, err error) {
	if headers, err = encodeList(ep.Headers, len(ep.Headers)); err != nil {
		return "", "", "", err
	}
	if channels, err = encodeList(ep.Channels, len(ep.Channels)); err != nil {
		return "", "", "", err
	}
	return headers, channels, string(ep.Filter), nil
}

// DecodeRouting reads what EncodeRouting wrote.
func DecodeRouting(headers, channels, filter string) (map[string]string, []string, json.RawMessage, error) {
	var (
		h  map[string]string
		c  []string
		fl json.RawMessage
	)
	if err := decodeList(headers, &h); err != nil {
		return nil, nil, nil, fmt.Errorf("headers: %w", err)
	}
	if err := decodeList(channels, &c); err != nil {
		return nil, nil, nil, fmt.Errorf("channels: %w", err)
	}
	if filter != "" {
		fl = json.RawMessage(filter)
	}
	if len(h) == 0 {
		h = nil
	}
	if len(c) == 0 {
		c = nil
	}
	return h, c, fl, nil
}

// EncodeEventRouting returns ev's channels and exclusions as the stores keep them.
func EncodeEventRouting(ev Event) (channels, excluded string, err error) {
	if channels, err = encodeList(ev.Channels, len(ev.Channels)); err != nil {
		return "", "", err
	}
	if excluded, err = encodeList(ev.Excluded, len(ev.Excluded)); err != nil {
		return "", "", err
	}
	return channels, excluded, nil
}

// DecodeEventRouting reads what EncodeEventRouting wrote.
func DecodeEventRouting(channels, excluded string) ([]string, []Exclusion, error) {
	var (
		c []string
		x []Exclusion
	)
	if err := decodeList(channels, &c); err != nil {
		return nil, nil, fmt.Errorf("channels: %w", err)
	}
	if err := decodeList(excluded, &x); err != nil {
		return nil, nil, fmt.Errorf("exclusions: %w", err)
	}
	if len(c) == 0 {
		c = nil
	}
	if len(x) == 0 {
		x = nil
	}
	return c, x, nil
}

func encodeList(v any, n int) (string, error) {
	if n == 0 {
		return "", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func decodeList(s string, v any) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}
