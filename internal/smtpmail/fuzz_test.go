package smtpmail_test

import (
	"errors"
	"net/mail"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/smtpmail"
)

// FuzzParse: Parse of any SWITCHBOARD_SMTP_URL value either refuses it with
// ErrInvalidURL or returns a sender whose From is an e-mail address.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"smtp://mail.example:25", "smtps://u:p@mail.example?from=a@b.example", "smtp://[::1]:2525", "smtp://x?from=", "mailto:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := smtpmail.Parse(raw)
		if err != nil {
			if !errors.Is(err, smtpmail.ErrInvalidURL) {
				t.Fatalf("Parse(%q): %v does not wrap ErrInvalidURL", raw, err)
			}
			return
		}
		if _, err := mail.ParseAddress(s.From()); err != nil {
			t.Fatalf("Parse(%q) accepted from %q: %v", raw, s.From(), err)
		}
	})
}
