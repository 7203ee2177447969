package featureserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// statusHookTransport makes the outbox's deliveries of call status notifications
// look like the status hooks a jambonz application expects (CALL-CONTROL.md §3):
// its configured method (GET sends the fields as query parameters), its Basic auth,
// the Jambonz-Signature of the account's webhook secret and the node's User-Agent,
// on top of the outbox's own Standard Webhooks headers. Other requests pass through.
type statusHookTransport struct {
	base      http.RoundTripper
	hooks     *statusPublisher
	secretOf  func(ctx context.Context, accountSid string) (string, error)
	userAgent string
	now       func() time.Time
}

func (t *statusHookTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("webhook-id") == "" || req.Body == nil || !strings.HasPrefix(req.Header.Get("Content-Type"), "application/json") {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	var fields struct {
		AccountSid string `json:"account_sid"`
	}
	if json.Unmarshal(body, &fields) != nil || fields.AccountSid == "" {
		return t.base.RoundTrip(out) // not a call status notification
	}
	out.Header.Set("User-Agent", t.userAgent)
	secret, secretErr := t.secretOf(req.Context(), fields.AccountSid)
	if secretErr != nil {
		secret = ""
	}
	signed := body
	// The endpoint's URL is the hook's, its own query included: that is the key.
	if hook, ok := t.hooks.hookFor(req.Context(), fields.AccountSid, out.URL.String()); ok {
		if hook.Username != "" {
			out.SetBasicAuth(hook.Username, hook.Password)
		}
		if hook.Method == http.MethodGet {
			q, err := transport.QueryFields(body)
			if err != nil {
				return nil, err
			}
			for k, vs := range out.URL.Query() {
				for _, v := range vs {
					q.Add(k, v)
				}
			}
			out.Method, out.URL.RawQuery = http.MethodGet, q.Encode()
			out.Body, out.ContentLength, signed = http.NoBody, 0, nil
			out.Header.Del("Content-Type")
			// The outbox signed the JSON body, which a GET does not send: sign what
			// is sent (nothing), as Jambonz-Signature does, so that it verifies.
			if secretErr != nil {
				out.Header.Del("webhook-signature") // it could not be made right
			} else if err := resignEmpty(out.Header, secret); err != nil {
				return nil, err
			}
		}
	}
	if secret != "" {
		out.Header.Set(webhooksig.JambonzSignatureHeader, webhooksig.SignJambonz(secret, t.now(), signed))
	}
	return t.base.RoundTrip(out)
}

// resignEmpty replaces the Standard Webhooks signature in h with one over an empty
// body, with the same webhook-id and webhook-timestamp, under the status webhook
// secret of the account's webhook secret (the key of its status endpoints).
func resignEmpty(h http.Header, secret string) error {
	unix, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		return fmt.Errorf("status hook: webhook-timestamp %q: %w", h.Get("webhook-timestamp"), err)
	}
	signer, err := webhooksig.NewSigner(StatusWebhookSecret(secret))
	if err != nil {
		return err
	}
	sig, err := signer.Sign(h.Get("webhook-id"), time.Unix(unix, 0), nil)
	if err != nil {
		return err
	}
	h.Set("webhook-signature", sig)
	return nil
}
