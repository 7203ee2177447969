package retry

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter interprets a Retry-After header value at time now. It accepts
// delta-seconds and the three HTTP-date forms (IMF-fixdate, RFC 850, asctime). It
// returns false ("absent") for an empty, negative or unparseable value. A date in the
// past means "now": it returns 0, true. Huge values saturate rather than overflow.
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(math.MaxInt64/time.Second) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		return 0, true
	}
	return d, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// Clamp limits d to [lo, hi]. A hi below lo is treated as lo.
func Clamp(d, lo, hi time.Duration) time.Duration {
	if d > hi {
		d = hi
	}
	if d < lo {
		d = lo
	}
	return d
}
