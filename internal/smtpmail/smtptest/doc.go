// Package smtptest is an SMTP sink on loopback for tests: it accepts every message,
// records its envelope and content, and signals each arrival, so that a test can
// check the e-mail a program sent without a mail server.
package smtptest
