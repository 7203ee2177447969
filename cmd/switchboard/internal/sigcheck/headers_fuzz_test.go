package sigcheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// FuzzParseHeaderDump feeds arbitrary text to the --headers parser, as a pasted
// request dump would carry it. It never panics; a refusal names the source and a line
// that exists; what it accepts are HTTP token names with trimmed values, at most one
// per line, which written back as "Name: value" lines parse to the same headers; and a
// blank line after the headers ends them, whatever follows.
func FuzzParseHeaderDump(f *testing.F) {
	testkit.AddSeeds[string](f,
		"POST /status HTTP/1.1\r\nHost: app.example.com\r\nwebhook-id: msg_1\r\n\r\n{\"a\":1}",
		"webhook-id: x\nno colon here\n",
		"\n\n  \nWebhook-Signature:  v1,abc= \n",
		"GET / HTTP/1.1\nbad name: x\n",
		"X: a\nX: b\n\nY: c",
		"a:b:c\r\n\r",
		"Y: b\nX: a HTTP/1\n", // a header that reads like a request line
		"",
	)
	f.Fuzz(func(t *testing.T, data string) {
		h, err := ParseHeaderDump(data, "--headers dump.txt")
		lines := strings.Split(data, "\n")
		if err != nil {
			var n int
			msg := err.Error()
			if _, serr := fmt.Sscanf(msg, "--headers dump.txt line %d", &n); serr != nil || n < 1 || n > len(lines) || h != nil {
				t.Fatalf("error %q does not name a line of the input (%d lines)", msg, len(lines))
			}
			return
		}
		values := 0
		var again strings.Builder
		for _, name := range slices.Sorted(maps.Keys(h)) {
			if !isToken(name) {
				t.Fatalf("accepted header name %q", name)
			}
			for _, v := range h[name] {
				if v != strings.TrimSpace(v) || strings.ContainsAny(v, "\n") {
					t.Fatalf("value %q of %s is not trimmed", v, name)
				}
				values++
				fmt.Fprintf(&again, "%s: %s\r\n", name, v)
			}
		}
		if values > len(lines) {
			t.Fatalf("%d values from %d lines", values, len(lines))
		}
		reparsed, err := ParseHeaderDump(again.String(), "again")
		if err != nil {
			t.Fatalf("headers written back do not parse: %v\n%s", err, again.String())
		}
		if !maps.EqualFunc(reparsed, h, slices.Equal) {
			t.Fatalf("written back and parsed again: %v, want %v", reparsed, h)
		}
		if len(h) > 0 {
			tail, err := ParseHeaderDump(data+"\n\nNot a header\n", "tail")
			if err != nil || !maps.EqualFunc(tail, h, slices.Equal) {
				t.Fatalf("a body after a blank line changed the headers: %v, %v", tail, err)
			}
		}
	})
}

func TestParseHeaderDump(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data string
		want       map[string][]string
		err        string
	}{
		{"request dump", "POST /status HTTP/1.1\r\nHost: a\r\nwebhook-id:  msg_1 \r\n\r\nwebhook-id: body", map[string][]string{"Host": {"a"}, "Webhook-Id": {"msg_1"}}, ""},
		{"blank lines before the headers", "\n \nX: 1\nX: 2\n", map[string][]string{"X": {"1", "2"}}, ""},
		{"a first header that reads like a request line", "X: a HTTP/1\n", map[string][]string{"X": {"a HTTP/1"}}, ""},
		{"a request line after a header is a bad line", "X: 1\nGET / HTTP/1.1\n", nil, `src line 2 "GET / HTTP/1.1": want 'Name: value'`},
		{"bad name", "x y: 1", nil, `src line 1: "x y" is not a header name`},
	} {
		h, err := ParseHeaderDump(tc.data, "src")
		if tc.err != "" {
			if err == nil || err.Error() != tc.err || h != nil {
				t.Errorf("%s: %v, %v; want the error %q", tc.name, h, err, tc.err)
			}
			continue
		}
		if err != nil || !maps.EqualFunc(map[string][]string(h), tc.want, slices.Equal) {
			t.Errorf("%s: %v, %v; want %v", tc.name, h, err, tc.want)
		}
	}
}
