// Package smtpmail sends plain-text e-mail through one SMTP server named by a URL
// (smtp://[user:password@]host:port, or smtps:// for TLS from the first byte): the
// e-mail side of the outbox's owner notices (docs/outbox.md §3). It speaks SMTP with
// net/smtp, upgrades with STARTTLS when the server offers it, and bounds every
// message by its context. It does not queue or retry: its caller decides.
package smtpmail
