package webhooksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"strconv"
	"time"
)

// The signed content is "{id}.{timestamp}.{body}", timestamp in decimal Unix seconds.

// appendContent appends the signed content to dst (ed25519 signs a whole message).
func appendContent(dst []byte, id string, unix int64, body []byte) []byte {
	dst = append(dst, id...)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, unix, 10)
	dst = append(dst, '.')
	return append(dst, body...)
}

// contentCap bounds the length of the signed content, to size its buffer once.
func contentCap(id string, body []byte) int {
	const maxInt64Digits = 19
	return len(id) + 2 + maxInt64Digits + len(body)
}

// hmacContent computes HMAC-SHA256 over the signed content without copying the body.
func hmacContent(key []byte, id string, unix int64, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(appendContent(make([]byte, 0, len(id)+22), id, unix, nil))
	h.Write(body)
	return h.Sum(nil)
}

// idProblem says what is wrong with a webhook id, or "" when nothing is. The spec asks
// for no "." (so the signed content splits one way only); we also require visible
// ASCII so the id survives as a header value unchanged.
func idProblem(id string) string {
	if id == "" {
		return "empty"
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c == '.' || c <= ' ' || c > '~' {
			return fmt.Sprintf("byte %d is %q (want visible ASCII other than \".\")", i, c)
		}
	}
	return ""
}

// unixSeconds returns ts as the header carries it, refusing times before the epoch.
func unixSeconds(ts time.Time) (int64, error) {
	unix := ts.Unix()
	if unix < 0 {
		return 0, fmt.Errorf("%w: %s is before the Unix epoch", ErrInvalidTimestamp, ts.UTC().Format(time.RFC3339))
	}
	return unix, nil
}
