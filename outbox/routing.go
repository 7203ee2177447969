package outbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/textproto"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-voice/switchboard/outbox/internal/filter"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Limits of an endpoint's headers and channels, and of an event's channels
// (docs/outbox.md §1).
const (
	MaxHeaders          = 32
	maxHeaderNameLen    = 64
	maxHeaderValueLen   = 4096
	maxEndpointChannels = 100
	maxEventChannels    = 10
	maxChannelLen       = 128
	// MaxRateLimit is the largest rate limit, in deliveries per second.
	MaxRateLimit = outboxdriver.MaxRateLimit
)

// reservedHeaders are the headers an attempt sets itself, or that belong to the
// connection rather than the request: an endpoint may not set them. Every name
// starting with "webhook-" is reserved too (the Standard Webhooks headers).
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Content-Type": true,
	"Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authorization": true, "Te": true, "Trailer": true,
	"Upgrade": true, "Expect": true,
}

// ReservedHeader reports whether an endpoint may not set the header name: one an
// attempt sets itself (Content-Type, Content-Length, Host, the webhook-* signature
// headers), or one of the connection's.
func ReservedHeader(name string) bool {
	canon := textproto.CanonicalMIMEHeaderKey(name)
	return reservedHeaders[canon] || strings.HasPrefix(strings.ToLower(name), "webhook-")
}

// checkHeaders validates an endpoint's headers and returns them under their
// canonical names. deliveryHeader is the policy's own header, reserved too.
func checkHeaders(h map[string]string, deliveryHeader string) (map[string]string, error) {
	if len(h) == 0 {
		return nil, nil
	}
	if len(h) > MaxHeaders {
		return nil, invalid("headers", "at most %d headers", MaxHeaders)
	}
	out := make(map[string]string, len(h))
	for _, name := range slices.Sorted(mapKeys(h)) {
		value := h[name]
		field := "headers." + name
		if name == "" || len(name) > maxHeaderNameLen || !headerToken(name) {
			return nil, invalid(field, "a header name is 1 to %d letters, digits and !#$%%&'*+-.^_`|~", maxHeaderNameLen)
		}
		canon := textproto.CanonicalMIMEHeaderKey(name)
		if ReservedHeader(name) || deliveryHeader != "" && strings.EqualFold(name, deliveryHeader) {
			return nil, invalid(field, "reserved: every attempt sets %s itself", canon)
		}
		if _, dup := out[canon]; dup {
			return nil, invalid(field, "given twice (header names are not case-sensitive)")
		}
		if len(value) > maxHeaderValueLen || !headerValue(value) {
			return nil, invalid(field, "a header value is at most %d bytes, without control characters", maxHeaderValueLen)
		}
		out[canon] = value
	}
	return out, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// headerToken reports whether s is an RFC 9110 token.
func headerToken(s string) bool {
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// headerValue reports whether s may be sent as a field value (RFC 9110 §5.5): no
// control character but tab.
func headerValue(s string) bool {
	for _, c := range []byte(s) {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return s == strings.TrimSpace(s)
}

// checkChannels validates channels (of an endpoint, or of an event, at most max)
// and returns them without repeats.
func checkChannels(field string, cs []string, max int) ([]string, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	if len(cs) > max {
		return nil, invalid(field, "at most %d channels", max)
	}
	var out []string
	for i, c := range cs {
		if c == "" || len(c) > maxChannelLen || !channelName(c) {
			return nil, invalid(field, "channel %d (%q): 1 to %d letters, digits and _ - . :", i, c, maxChannelLen)
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func channelName(s string) bool {
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':'
		if !ok {
			return false
		}
	}
	return true
}

// checkFilter validates an endpoint's filter and returns it compacted (nil for none).
func checkFilter(raw json.RawMessage) (json.RawMessage, error) {
	f, err := filter.Parse(raw)
	if err != nil {
		var fe *filter.Error
		if errors.As(err, &fe) {
			return nil, invalid("filter"+fe.Path, "%s", fe.Reason)
		}
		return nil, invalid("filter", "%v", err)
	}
	if f == nil {
		return nil, nil
	}
	compact, err := compactJSON(raw)
	if err != nil {
		return nil, invalid("filter", "not valid JSON")
	}
	if string(compact) == "{}" {
		return nil, nil // no condition: no filter
	}
	return compact, nil
}

// filters caches the parsed filters of endpoints, by endpoint, as the filter was
// when parsed: a publish evaluates each endpoint's filter without parsing it again.
type filters struct{ m sync.Map } // endpoint id → cachedFilter

type cachedFilter struct {
	raw string
	f   *filter.Filter
}

// of returns ep's parsed filter, nil for none. A stored filter this version cannot
// parse lets everything through: an event is never lost to it.
func (c *filters) of(ep Endpoint) *filter.Filter {
	if len(ep.Filter) == 0 {
		return nil
	}
	if v, ok := c.m.Load(ep.ID); ok && v.(cachedFilter).raw == string(ep.Filter) {
		return v.(cachedFilter).f
	}
	f, err := filter.Parse(ep.Filter)
	if err != nil {
		f = nil
	}
	c.m.Store(ep.ID, cachedFilter{raw: string(ep.Filter), f: f})
	return f
}

// compactJSON is raw without insignificant space; it fails on invalid JSON.
func compactJSON(raw []byte) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
