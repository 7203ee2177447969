package outbox

import (
	"encoding/json"
	"errors"
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
