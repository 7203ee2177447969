package smtpmail_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/smtpmail"
	"github.com/switchboard-voice/switchboard/internal/smtpmail/smtptest"
)

// TestSendToSink: a message reaches a real SMTP server on loopback with its envelope
// (the URL's from, every recipient) and headers; a subject that is not ASCII is
// MIME-encoded.
func TestSendToSink(t *testing.T) {
	sink := smtptest.NewSink(t)
	s, err := smtpmail.Parse(sink.URL() + "?from=alerts@switchboard.example")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Send(ctx, []string{"ops@acme.example", "oncall@acme.example"}, "Endpoint paused: ep_1 — HTTP_410", "line one\n.line two starts with a dot"); err != nil {
		t.Fatal(err)
	}
	msgs := sink.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	if m.From != "alerts@switchboard.example" || strings.Join(m.To, ",") != "ops@acme.example,oncall@acme.example" {
		t.Fatalf("envelope %+v", m)
	}
	for _, want := range []string{"From: alerts@switchboard.example\r\n", "To: ops@acme.example, oncall@acme.example\r\n",
		"Subject: =?utf-8?q?", "\r\n\r\nline one\r\n.line two starts with a dot\r\n"} {
		if !strings.Contains(m.Data, want) {
			t.Errorf("message lacks %q:\n%s", want, m.Data)
		}
	}
}

// TestParseAndRefusals: bad URLs and bad input are refused before anything is sent.
func TestParseAndRefusals(t *testing.T) {
	for _, bad := range []string{"http://mail.example", "smtp://", "smtp://mail.example?to=x", "smtp://mail.example?from=not-an-address", "smtp://mail.example/path", "::"} {
		if _, err := smtpmail.Parse(bad); !errors.Is(err, smtpmail.ErrInvalidURL) {
			t.Errorf("Parse(%q) = %v", bad, err)
		}
	}
	s, err := smtpmail.Parse("smtp://user:pw@mail.example:2525")
	if err != nil || s.From() != smtpmail.DefaultFrom {
		t.Fatalf("%v %v", s, err)
	}
	sink := smtptest.NewSink(t)
	s, _ = smtpmail.Parse(sink.URL())
	ctx := context.Background()
	for _, c := range []struct {
		to      []string
		subject string
	}{{nil, "x"}, {[]string{"not an address"}, "x"}, {[]string{"a@b.example\r\nRCPT TO:<evil@x>"}, "x"}, {[]string{"a@b.example"}, "two\r\nBcc: evil@x"}} {
		if err := s.Send(ctx, c.to, c.subject, "body"); err == nil {
			t.Errorf("Send(%q, %q) sent", c.to, c.subject)
		}
	}
	if n := len(sink.Messages()); n != 0 {
		t.Fatalf("%d messages sent for refused input", n)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Send(ended, []string{"a@b.example"}, "x", "y"); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended ctx: %v", err)
	}
}
