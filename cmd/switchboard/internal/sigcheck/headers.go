package sigcheck

import (
	"fmt"
	"net/http"
	"os"
	"strings"
)

// CollectHeaders reads --headers FILE, then the -H values.
func CollectHeaders(file string, flags []string) (http.Header, error) {
	h := http.Header{}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--headers: %v", err)
		}
		if h, err = ParseHeaderDump(string(data), "--headers "+file); err != nil {
			return nil, err
		}
	}
	return h, addHeaders(h, flags, "-H")
}

// ParseHeaderDump reads the header lines of a request dump, as --headers takes them:
// "Name: value" lines (LF or CRLF), a request line such as "POST /hook HTTP/1.1"
// before the first header skipped, blank lines before it ignored, and the first blank
// line after a header ending them (a pasted body may follow). source names the input
// in errors, which give the line number.
func ParseHeaderDump(data, source string) (http.Header, error) {
	h := http.Header{}
	for n, line := range strings.Split(data, "\n") {
		line = strings.TrimSuffix(line, "\r")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0 && len(h) > 0:
			return h, nil
		case len(fields) == 0:
		case len(h) == 0 && len(fields) == 3 && isToken(fields[0]) && strings.HasPrefix(fields[2], "HTTP/"):
			// A request line; its method is a token, where a header's first field
			// holds the colon (so "X: a HTTP/1" stays a header).
		default:
			if err := addHeaders(h, []string{line}, fmt.Sprintf("%s line %d", source, n+1)); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

// addHeaders adds "Name: value" lines as curl's -H reads them: the name is an HTTP
// token (RFC 9110), the value is trimmed.
func addHeaders(h http.Header, lines []string, source string) error {
	for _, line := range lines {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return fmt.Errorf("%s %q: want 'Name: value'", source, line)
		}
		if !isToken(name) {
			return fmt.Errorf("%s: %q is not a header name", source, name)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return nil
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2), what a header name is.
func isToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return r >= 0x7f || !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r))
	}) < 0
}
