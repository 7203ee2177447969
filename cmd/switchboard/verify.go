package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/sigcheck"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

type verifyFlags struct {
	secrets     []string
	headers     []string
	headersFile string
	body        string
	tolerance   time.Duration
	scheme      string
	asJSON      bool
}

// errReported ends the command with status 1 once the verdict is printed: run prints
// nothing more for an empty message.
var errReported = errors.New("")

func newVerifyCmd(c *cli) *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify --secret KEY -H 'Name: value'... [--body FILE]",
		Short: "Check the signature of a webhook received from Switchboard",
		Long: `Verify checks that a webhook really comes from Switchboard: give it the request's
headers (-H, or --headers with lines copied from a request dump), its body exactly as
received (--body FILE, or stdin), and the key you were given (--secret).

Two schemes are understood. With a webhook-signature header, Standard Webhooks:
--secret is the whsec_ secret (v1, e.g. an account's status_webhook_secret) or the
sender's whpk_ public key (v1a). With a Jambonz-Signature header, --secret is the
account's plain webhook_secret. When both headers are present Standard Webhooks is
checked; --scheme jambonz checks the other one. Repeat --secret during key rotation:
any one matching is enough.

The body must be byte for byte what was signed: echo and most editors add a trailing
newline, which makes the signature fail (use printf, or save the raw body).

Exit status: 0 when the signature is valid, 1 when it is not (wrong key, altered body,
timestamp outside --tolerance, malformed signature), 2 for bad usage (missing or
malformed key, header or body file): nothing was verified.`,
		Example: "  switchboard verify --secret \"$WHSEC\" --body body.json \\\n" +
			"    -H 'webhook-id: msg_2Kx' -H 'webhook-timestamp: 1795986000' -H 'webhook-signature: v1,K5oZ…'\n" +
			"  printf '%s' \"$BODY\" | switchboard verify --json --secret \"$SECRET\" -H \"Jambonz-Signature: $SIG\"\n" +
			"  switchboard verify --secret \"$WHSEC\" --headers request.txt --body body.json --tolerance 720h",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runVerify(c, f) },
	}
	fl := cmd.Flags()
	// StringArray, not StringSlice: header values and jambonz secrets may contain commas.
	fl.StringArrayVar(&f.secrets, "secret", nil, "whsec_ secret or whpk_ public key (Standard Webhooks), or the plain webhook secret (Jambonz-Signature); repeatable")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "a received header, 'Name: value' as in curl; repeatable")
	fl.StringVar(&f.headersFile, "headers", "", "file of received header lines 'Name: value' (a request line is skipped; a blank line ends them)")
	fl.StringVar(&f.body, "body", "-", "file holding the raw body; - reads stdin")
	fl.DurationVar(&f.tolerance, "tolerance", webhooksig.DefaultTolerance, "how far the signed time may be from this machine's clock, either way")
	fl.StringVar(&f.scheme, "scheme", sigcheck.SchemeAuto, "auto, standard-webhooks or jambonz")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	return cmd
}

func runVerify(c *cli, f verifyFlags) error {
	if len(f.secrets) == 0 {
		return usageError("--secret is required: the whsec_ secret, whpk_ public key or webhook secret you were given")
	}
	for i, s := range f.secrets {
		if s == "" {
			return usageError("--secret #%d is empty (an unset shell variable?)", i+1)
		}
	}
	if f.tolerance <= 0 {
		return usageError("--tolerance=%s: want a positive duration such as 5m", f.tolerance)
	}
	h, err := sigcheck.CollectHeaders(f.headersFile, f.headers)
	if err != nil {
		return usageError("%v", err)
	}
	scheme, err := sigcheck.PickScheme(h, f.scheme)
	if err != nil {
		return usageError("%v", err)
	}
	body, err := readBody(c, f.body)
	if err != nil {
		return usageError("%v", err)
	}
	// One instant for the verdict and for the age printed beside it.
	now := time.Now()
	v, err := sigcheck.Check(f.secrets, h, body, scheme, now, f.tolerance)
	if err != nil {
		return usageError("%v", err)
	}
	if f.asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v.JSON); err != nil {
			return failure(err)
		}
	} else {
		fmt.Fprintln(c.stdout, v.Line(now, len(f.secrets)))
	}
	for _, hint := range v.Hints {
		fmt.Fprintln(c.stderr, "hint:", hint)
	}
	if !v.Valid {
		return failure(errReported)
	}
	return nil
}

func readBody(c *cli, path string) ([]byte, error) {
	if path == "-" || path == "" {
		// Reading a terminal would wait for input nobody means to type.
		if isTerminal(c.stdin) {
			return nil, errors.New("no body: pipe it on stdin or give --body FILE")
		}
		body, err := io.ReadAll(c.stdin)
		if err != nil {
			return nil, fmt.Errorf("reading the body from stdin: %v", err)
		}
		return body, nil
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--body: %v", err)
	}
	return body, nil
}
