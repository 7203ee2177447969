package outboxdriver

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// EncodeHeaders is the stored form of an attempt's request headers: their JSON, or
// "" for none. Stores keep it in a text column.
func EncodeHeaders(h http.Header) string {
	if len(h) == 0 {
		return ""
	}
	b, err := json.Marshal(h)
	if err != nil { // a map of strings to strings always encodes
		panic(err)
	}
	return string(b)
}

// DecodeHeaders reads what EncodeHeaders stored: "" is nil.
func DecodeHeaders(s string) (http.Header, error) {
	if s == "" {
		return nil, nil
	}
	var h http.Header
	if err := json.Unmarshal([]byte(s), &h); err != nil {
		return nil, fmt.Errorf("stored request headers: %w", err)
	}
	return h, nil
}
