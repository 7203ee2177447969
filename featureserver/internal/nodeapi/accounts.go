package nodeapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/statushooks"
)

// DefaultSecretGrace is how long a rotated webhook secret keeps signing beside the
// new one when the rotation names no grace period: a day, as the outbox's
// DefaultRotationGrace.
const DefaultSecretGrace = 24 * time.Hour

// maxSecretGrace bounds the grace period of a rotation: an old secret that signs
// for weeks is a leaked secret that still works.
const maxSecretGrace = 30 * 24 * time.Hour

// adminOperations are the operations of the admin token (SWITCHBOARD_ADMIN_TOKEN);
// every other /v1/Accounts/{account} operation takes the account's own token.
var adminOperations = map[string]bool{
	"create-account": true, "list-accounts": true, "update-account": true, "delete-account": true,
	"rotate-api-token": true, "rotate-account-webhook-secret": true,
}

type createAccountInput struct {
	Authorization string `header:"Authorization" doc:"Bearer admin token (SWITCHBOARD_ADMIN_TOKEN)"`
	Body          accountBody
}

type accountBody struct {
	Name string `json:"name" minLength:"1" maxLength:"200" doc:"Display name"`
}

// AdminAccountParams are the path and header of an admin operation on one
// account.
type AdminAccountParams struct {
	Account       string `path:"account" doc:"Account sid" maxLength:"64"`
	Authorization string `header:"Authorization" doc:"Bearer admin token (SWITCHBOARD_ADMIN_TOKEN)"`
}

// accountView is an account as the API shows it, with its webhook secrets.
type accountView struct {
	AccountSid          string     `json:"account_sid"`
	Sid                 string     `json:"sid" doc:"The same sid (jambonz answers it)"`
	Name                string     `json:"name"`
	CreatedAt           time.Time  `json:"created_at"`
	WebhookSecret       string     `json:"webhook_secret" doc:"Signs the account's hooks (Jambonz-Signature)"`
	StatusWebhookSecret string     `json:"status_webhook_secret" doc:"Standard Webhooks secret (whsec_) of the account's status hook deliveries"`
	PreviousSecretUntil *time.Time `json:"previous_secret_until,omitempty" doc:"Until then the secret a rotation replaced signs too"`
}

func (a *API) view(acct nodestore.Account) accountView {
	v := accountView{AccountSid: acct.Sid, Sid: acct.Sid, Name: acct.Name, CreatedAt: acct.CreatedAt,
		WebhookSecret: acct.WebhookSecret, StatusWebhookSecret: statushooks.SigningSecret(acct.WebhookSecret)}
	if acct.PreviousWebhookSecret != "" && a.clock.Now().Before(acct.PreviousSecretUntil) {
		until := acct.PreviousSecretUntil
		v.PreviousSecretUntil = &until
	}
	return v
}

type createAccountOutput struct {
	Body struct {
		accountView
		APIToken string `json:"api_token" doc:"Bearer token of the account: shown once"`
	}
}

type accountOutput struct {
	Body accountView
}

type listAccountsOutput struct {
	Body []accountView
}

type updateAccountInput struct {
	AdminAccountParams
	Body accountBody
}

type rotateTokenOutput struct {
	Body struct {
		APIToken string `json:"api_token" doc:"The account's new bearer token: shown once; every earlier token is revoked"`
	}
}

type rotateSecretInput struct {
	AdminAccountParams
	Body *struct {
		GracePeriodSeconds *int `json:"grace_period_seconds,omitempty" minimum:"0" maximum:"2592000" doc:"How long the old secret keeps signing beside the new one (default 86400; 0: it stops at once)"`
	}
}

func (a *API) registerAccounts(api huma.API) {
	// The account's own token reads its secrets: the way to learn the webhook secret
	// a bootstrap file left for the node to generate.
	registerForAccount(a, api, huma.Operation{
		OperationID: "get-account", Method: http.MethodGet, Path: "/v1/Accounts/{account}",
		Summary: "Read the account, with its webhook secrets (the account's own token)",
	}, func(ctx context.Context, acct nodestore.Account, in *struct{ AccountParams }) (*accountOutput, error) {
		return &accountOutput{Body: a.view(acct)}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "list-accounts", Method: http.MethodGet, Path: "/v1/Accounts",
		Summary: "List the accounts, oldest first (admin token)",
	}, func(ctx context.Context, in *struct {
		Authorization string `header:"Authorization" doc:"Bearer admin token (SWITCHBOARD_ADMIN_TOKEN)"`
	}) (*listAccountsOutput, error) {
		accounts, err := a.store.ListAccounts(ctx)
		if err != nil {
			return nil, a.internal(err)
		}
		return &listAccountsOutput{Body: viewsOf(accounts, a.view)}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "create-account", Method: http.MethodPost, Path: "/v1/Accounts",
		Summary: "Create an account (admin token)", DefaultStatus: http.StatusCreated, MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *createAccountInput) (*createAccountOutput, error) {
		acct := nodestore.Account{Sid: nodestore.NewSid(), Name: in.Body.Name, WebhookSecret: nodestore.NewSecret(24),
			CreatedAt: a.clock.Now().UTC().Truncate(time.Millisecond)}
		token := nodestore.NewSecret(32) // the store keeps its hash only: shown once, here
		if err := a.store.PutAccount(ctx, nodestore.PutAccountParams{Account: acct, TokenHash: nodestore.HashToken(token), Origin: nodestore.TokenFromAPI}); err != nil {
			return nil, a.internal(err)
		}
		out := &createAccountOutput{}
		out.Body.accountView, out.Body.APIToken = a.view(acct), token
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "update-account", Method: http.MethodPut, Path: "/v1/Accounts/{account}",
		Summary: "Rename an account (admin token)", MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *updateAccountInput) (*accountOutput, error) {
		acct, err := a.adminAccount(ctx, in.Account)
		if err != nil {
			return nil, err
		}
		acct.Name = in.Body.Name
		if err := a.store.PutAccount(ctx, nodestore.PutAccountParams{Account: acct}); err != nil {
			return nil, a.internal(err)
		}
		return &accountOutput{Body: a.view(acct)}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "delete-account", Method: http.MethodDelete, Path: "/v1/Accounts/{account}",
		Summary: "Delete an account with its tokens, applications, call records and alerts (admin token)", DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *struct{ AdminAccountParams }) (*struct{}, error) {
		if err := a.store.DeleteAccount(ctx, in.Account); err != nil {
			return nil, a.notFoundOr(err, "account")
		}
		return nil, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "rotate-api-token", Method: http.MethodPost, Path: "/v1/Accounts/{account}/ApiToken",
		Summary:       "Replace the account's API token: the new one is shown once, every earlier one stops working at once (admin token)",
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct{ AdminAccountParams }) (*rotateTokenOutput, error) {
		acct, err := a.adminAccount(ctx, in.Account)
		if err != nil {
			return nil, err
		}
		token := nodestore.NewSecret(32)
		if err := a.store.PutAccount(ctx, nodestore.PutAccountParams{Account: acct, TokenHash: nodestore.HashToken(token),
			Origin: nodestore.TokenFromAPI, ReplaceTokens: true}); err != nil {
			return nil, a.internal(err)
		}
		out := &rotateTokenOutput{}
		out.Body.APIToken = token
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "rotate-account-webhook-secret", Method: http.MethodPost, Path: "/v1/Accounts/{account}/WebhookSecret",
		Summary:      "Replace the account's webhook secret; the old one keeps signing beside it for the grace period (admin token)",
		MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *rotateSecretInput) (*accountOutput, error) {
		acct, err := a.adminAccount(ctx, in.Account)
		if err != nil {
			return nil, err
		}
		grace := DefaultSecretGrace
		if in.Body != nil && in.Body.GracePeriodSeconds != nil {
			grace = time.Duration(*in.Body.GracePeriodSeconds) * time.Second
		}
		grace = min(grace, maxSecretGrace)
		old := acct
		now := a.clock.Now().UTC()
		acct.PreviousWebhookSecret, acct.PreviousSecretUntil = acct.WebhookSecret, now.Add(grace).Truncate(time.Millisecond)
		if grace == 0 {
			acct.PreviousWebhookSecret, acct.PreviousSecretUntil = "", time.Time{}
		}
		acct.WebhookSecret = nodestore.NewSecret(24)
		if err := a.store.PutAccount(ctx, nodestore.PutAccountParams{Account: acct}); err != nil {
			return nil, a.internal(err)
		}
		if a.secretRotated != nil {
			if err := a.secretRotated(ctx, old, acct, grace); err != nil {
				// The account signs with the new secret already; its status hook
				// endpoints follow at their next use (statushooks).
				a.log.Warn().Err(err).Str("account_sid", acct.Sid).Msg("rotating the status hook endpoints' secrets failed")
			}
		}
		return &accountOutput{Body: a.view(acct)}, nil
	})
}

// adminAccount reads the account of an admin operation: 404 when there is none.
func (a *API) adminAccount(ctx context.Context, sid string) (nodestore.Account, error) {
	acct, err := a.store.GetAccount(ctx, sid)
	if errors.Is(err, nodestore.ErrNotFound) {
		return acct, huma.Error404NotFound("account not found")
	}
	if err != nil {
		return acct, a.internal(err)
	}
	return acct, nil
}
