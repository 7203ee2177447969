package outbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzStoredResponse: whatever a receiver answers, the stored body is valid UTF-8
// without NUL, at most 64 KiB, and at most 1,000 characters unless it is JSON.
func FuzzStoredResponse(f *testing.F) {
	f.Add([]byte(`{"ok":true}`), "application/json")
	f.Add([]byte("plain text"), "text/plain")
	f.Add([]byte("\xff\xfe\x00bad utf8"), "")
	f.Add([]byte(strings.Repeat("é", 2000)), "text/html")
	f.Add([]byte(`["`+strings.Repeat("\xff", 70<<10)+`"]`), "application/json")
	f.Fuzz(func(t *testing.T, raw []byte, contentType string) {
		s := storedResponse(raw, contentType)
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) || len(s) > maxStoredResponse {
			t.Fatalf("stored %d bytes, valid %v", len(s), utf8.ValidString(s))
		}
		if len(raw) <= maxStoredResponse && !json.Valid(raw) && utf8.RuneCountInString(s) > maxStoredNonJSON {
			t.Fatalf("non-JSON kept %d characters", utf8.RuneCountInString(s))
		}
	})
}

// FuzzValidateEvent: an accepted event has an id webhook-id can carry and a
// printable type; a refused one is a *ValidationError.
func FuzzValidateEvent(f *testing.F) {
	f.Add("evt_1", "acct", "call.status", []byte(`{"a":1}`))
	f.Add("", "acct", "call.status", []byte(``))
	f.Add("a.b", "acct", "x", []byte(`null`))
	f.Add("ok", "", "bad type", []byte(`{`))
	f.Fuzz(func(t *testing.T, id, account, typ string, data []byte) {
		ev := Event{ID: id, Account: account, Type: typ, Data: data}
		err := validateEvent(&ev, time.Unix(1700000000, 0))
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not a ValidationError", err)
			}
			return
		}
		if ev.ID == "" || strings.ContainsAny(ev.ID, ". ") || !printable(ev.ID) || !printable(ev.Type) || ev.CreatedAt.IsZero() {
			t.Fatalf("accepted %+v", ev)
		}
	})
}

// FuzzCheckHeaders: an endpoint's headers arrive as a JSON map from the API. Whatever
// they hold, checkHeaders refuses them with a *ValidationError naming "headers" or
// one of them, or accepts headers that an attempt can send as they are: a request
// written with them reads back with the same names and values, and none of them is
// one the attempt sets itself.
func FuzzCheckHeaders(f *testing.F) {
	f.Add("Authorization", "Bearer abc", "x-tenant", "acme")
	f.Add("Host", "evil.example", "X-A", "1")
	f.Add("webhook-id", "x", "x-b", "a\r\nInjected: 1")
	f.Add("X-Space", " padded ", "X-Tab", "a\tb")
	f.Add("x-a", "1", "X-A", "2")
	f.Add("X-Latin", "caf\xe9", "X Bad", "v")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string) {
		in := map[string]string{n1: v1, n2: v2}
		out, err := checkHeaders(in, "Digize-Delivery")
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.HasPrefix(ve.Field, "headers") {
				t.Fatalf("error %v is not a ValidationError of headers", err)
			}
			return
		}
		var buf strings.Builder
		h := http.Header{}
		for k, v := range out {
			if ReservedHeader(k) || strings.EqualFold(k, "Digize-Delivery") {
				t.Fatalf("reserved header %q accepted", k)
			}
			h[k] = []string{v}
		}
		buf.WriteString("POST / HTTP/1.1\r\nHost: x\r\n")
		if err := h.Write(&buf); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("\r\n")
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(buf.String())))
		if err != nil {
			t.Fatalf("accepted headers %q do not make a request: %v", out, err)
		}
		for k, v := range out {
			if got := req.Header.Get(k); got != v {
				t.Fatalf("header %s sent as %q reads back %q", k, v, got)
			}
		}
	})
}
