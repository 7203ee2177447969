package smtpmail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// ErrInvalidURL is wrapped by the error of a URL Parse refuses.
var ErrInvalidURL = errors.New("smtpmail: invalid SMTP URL")

// DefaultFrom is the sender when the URL names none.
const DefaultFrom = "switchboard@localhost"

// Sender sends mail through one server.
type Sender struct {
	addr     string // host:port
	host     string
	implicit bool // smtps: TLS from the first byte
	auth     smtp.Auth
	from     string
	// TLSConfig, when set, is used for STARTTLS and smtps (tests trust their own CA).
	TLSConfig *tls.Config
}

// Parse reads an SMTP URL: smtp://[user:password@]host[:port][?from=address] (port
// 25 by default) or smtps://... (port 465). from is the envelope and header sender
// (default DefaultFrom). A bad URL is an error wrapping ErrInvalidURL.
func Parse(raw string) (*Sender, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	s := &Sender{from: DefaultFrom}
	port := "25"
	switch u.Scheme {
	case "smtp":
	case "smtps":
		s.implicit, port = true, "465"
	default:
		return nil, fmt.Errorf("%w: scheme %q (want smtp or smtps)", ErrInvalidURL, u.Scheme)
	}
	s.host = u.Hostname()
	if s.host == "" {
		return nil, fmt.Errorf("%w: no host", ErrInvalidURL)
	}
	if u.Port() != "" {
		port = u.Port()
	}
	s.addr = net.JoinHostPort(s.host, port)
	if u.User != nil {
		pw, _ := u.User.Password()
		s.auth = smtp.PlainAuth("", u.User.Username(), pw, s.host)
	}
	for k, vs := range u.Query() {
		switch k {
		case "from":
			a, err := mail.ParseAddress(vs[0])
			if err != nil {
				return nil, fmt.Errorf("%w: from=%q: %v", ErrInvalidURL, vs[0], err)
			}
			s.from = a.Address
		default:
			return nil, fmt.Errorf("%w: unknown parameter %q (only from)", ErrInvalidURL, k)
		}
	}
	if u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("%w: unexpected path %q", ErrInvalidURL, u.Path)
	}
	return s, nil
}

// From is the sender address.
func (s *Sender) From() string { return s.from }

// Send delivers one plain-text message to every address of to, within ctx (it fails
// with ctx's error when ctx ends first). Addresses that are not e-mail addresses,
// and header injection in subject, are refused before anything is sent.
func (s *Sender) Send(ctx context.Context, to []string, subject, body string) error {
	if len(to) == 0 {
		return errors.New("smtpmail: no recipient")
	}
	for _, a := range to {
		if _, err := mail.ParseAddress(a); err != nil || strings.ContainsAny(a, "\r\n<>") {
			return fmt.Errorf("smtpmail: recipient %q is not an address", a)
		}
	}
	if strings.ContainsAny(subject, "\r\n") {
		return errors.New("smtpmail: subject must be one line")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return fmt.Errorf("smtpmail: connect %s: %w", s.addr, err)
	}
	defer conn.Close()
	// The whole conversation within ctx: a server that stops answering does not
	// hold the sender.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if s.implicit {
		conn = tls.Client(conn, s.tlsConfig())
	}
	err = s.converse(conn, to, subject, body)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (s *Sender) tlsConfig() *tls.Config {
	if s.TLSConfig != nil {
		c := s.TLSConfig.Clone()
		if c.ServerName == "" {
			c.ServerName = s.host
		}
		return c
	}
	return &tls.Config{ServerName: s.host}
}

func (s *Sender) converse(conn net.Conn, to []string, subject, body string) error {
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		return fmt.Errorf("smtpmail: greeting: %w", err)
	}
	defer c.Close()
	if err := c.Hello("localhost"); err != nil {
		return fmt.Errorf("smtpmail: EHLO: %w", err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok && !s.implicit {
		if err := c.StartTLS(s.tlsConfig()); err != nil {
			return fmt.Errorf("smtpmail: STARTTLS: %w", err)
		}
	}
	if s.auth != nil {
		if err := c.Auth(s.auth); err != nil {
			return fmt.Errorf("smtpmail: AUTH: %w", err)
		}
	}
	if err := c.Mail(s.from); err != nil {
		return fmt.Errorf("smtpmail: MAIL FROM: %w", err)
	}
	for _, a := range to {
		if err := c.Rcpt(a); err != nil {
			return fmt.Errorf("smtpmail: RCPT TO %s: %w", a, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtpmail: DATA: %w", err)
	}
	if _, err := w.Write(message(s.from, to, subject, body)); err != nil {
		return fmt.Errorf("smtpmail: message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtpmail: message: %w", err)
	}
	return c.Quit()
}

// message is an RFC 5322 plain-text message, lines ending CRLF.
func message(from string, to []string, subject, body string) []byte {
	var b strings.Builder
	b.WriteString("From: " + from + "\r\n")
	b.WriteString("To: " + strings.Join(to, ", ") + "\r\n")
	b.WriteString("Subject: " + mimeHeader(subject) + "\r\n")
	b.WriteString("Date: " + time.Now().UTC().Format(time.RFC1123Z) + "\r\n")
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		b.WriteString(line + "\r\n")
	}
	return []byte(b.String())
}

// mimeHeader encodes a header value that is not plain ASCII (RFC 2047).
func mimeHeader(s string) string {
	for _, r := range s {
		if r > 0x7e {
			return mime.QEncoding.Encode("utf-8", s)
		}
	}
	return s
}
