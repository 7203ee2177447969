package nodeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"net/url"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/fragment"
)

type notificationsInput struct {
	AccountParams
	Body nodestore.Notifications
}

type notificationsOutput struct{ Body nodestore.Notifications }

// registerNotifications serves where an account's endpoint notices go (paused,
// disabled, removed: docs/outbox.md §3).
func (a *API) registerNotifications(api huma.API) {
	registerForAccount(a, api, huma.Operation{
		OperationID: "get-account-notifications", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Notifications",
		Summary: "Where the account's webhook endpoint notices go",
	}, func(ctx context.Context, acct nodestore.Account, in *struct{ AccountParams }) (*notificationsOutput, error) {
		s, err := a.store.GetNotifications(ctx, acct.Sid)
		if err != nil {
			return nil, a.internal(err)
		}
		return &notificationsOutput{Body: s}, nil
	})
	registerForAccount(a, api, huma.Operation{
		OperationID: "set-account-notifications", Method: http.MethodPut, Path: "/v1/Accounts/{account}/Notifications",
		Summary: "Set where the account's webhook endpoint notices go (paused, disabled, removed)", MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, acct nodestore.Account, in *notificationsInput) (*notificationsOutput, error) {
		s := in.Body
		if s.WebhookURL != "" {
			if err := checkNoticeURL(a.checkNoticeURL, s.WebhookURL); err != nil {
				return nil, huma.Error422UnprocessableEntity("invalid notifications", &huma.ErrorDetail{Location: "body.webhook_url", Message: err.Error(), Value: fragment.Redact(s.WebhookURL)})
			}
		}
		for i, e := range s.Emails {
			if addr, err := mail.ParseAddress(e); err != nil || addr.Address != e {
				return nil, huma.Error422UnprocessableEntity("invalid notifications", &huma.ErrorDetail{Location: fmt.Sprintf("body.emails[%d]", i), Message: "not an e-mail address", Value: e})
			}
		}
		if s.Emails == nil {
			s.Emails = []string{}
		}
		if err := a.store.SaveNotifications(ctx, nodestore.SaveNotificationsParams{AccountSid: acct.Sid, Notifications: s, At: a.clock.Now()}); err != nil {
			return nil, a.internal(err)
		}
		return &notificationsOutput{Body: s}, nil
	})
}

// checkNoticeURL accepts an absolute http(s) URL the egress rules do not refuse.
func checkNoticeURL(check func(u *url.URL) error, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return errors.New("must be an absolute http or https URL")
	}
	if err := check(u); err != nil {
		return fmt.Errorf("refused: %v", err)
	}
	return nil
}
