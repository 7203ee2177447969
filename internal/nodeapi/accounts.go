package nodeapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/statushooks"
)

type createAccountInput struct {
	Authorization string `header:"Authorization" doc:"Bearer admin token (SWITCHBOARD_ADMIN_TOKEN)"`
	Body          struct {
		Name string `json:"name" minLength:"1" maxLength:"200" doc:"Display name"`
	}
}

type createAccountOutput struct {
	Body struct {
		AccountSid          string `json:"account_sid"`
		Name                string `json:"name"`
		APIToken            string `json:"api_token" doc:"Bearer token of the account: shown once"`
		WebhookSecret       string `json:"webhook_secret" doc:"Signs the account's hooks (Jambonz-Signature)"`
		StatusWebhookSecret string `json:"status_webhook_secret" doc:"Standard Webhooks secret (whsec_) of the account's status hook deliveries"`
	}
}

type accountOutput struct {
	Body struct {
		AccountSid          string `json:"account_sid"`
		Name                string `json:"name"`
		WebhookSecret       string `json:"webhook_secret" doc:"Signs the account's hooks (Jambonz-Signature)"`
		StatusWebhookSecret string `json:"status_webhook_secret" doc:"Standard Webhooks secret (whsec_) of the account's status hook deliveries"`
	}
}

func (a *API) registerAccounts(api huma.API) {
	// The account's own token reads its secrets: the way to learn the webhook secret
	// a bootstrap file left for the node to generate.
	huma.Register(api, huma.Operation{
		OperationID: "get-account", Method: http.MethodGet, Path: "/v1/Accounts/{account}",
		Summary: "Read the account, with its webhook secrets (the account's own token)",
	}, func(ctx context.Context, in *struct{ AccountParams }) (*accountOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		out := &accountOutput{}
		out.Body.AccountSid, out.Body.Name, out.Body.WebhookSecret = acct.Sid, acct.Name, acct.WebhookSecret
		out.Body.StatusWebhookSecret = statushooks.SigningSecret(acct.WebhookSecret)
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "create-account", Method: http.MethodPost, Path: "/v1/Accounts",
		Summary: "Create an account (admin token)", DefaultStatus: http.StatusCreated, MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *createAccountInput) (*createAccountOutput, error) {
		if err := a.authorizeAdmin(in.Authorization); err != nil {
			return nil, err
		}
		acct := nodestore.Account{Sid: nodestore.NewSid(), Name: in.Body.Name, WebhookSecret: nodestore.NewSecret(24),
			CreatedAt: a.clock.Now().UTC().Truncate(time.Millisecond)}
		token := nodestore.NewSecret(32) // the store keeps its hash only: shown once, here
		if err := a.store.PutAccount(ctx, nodestore.PutAccountParams{Account: acct, TokenHash: nodestore.HashToken(token), Origin: nodestore.TokenFromAPI}); err != nil {
			return nil, a.internal(err)
		}
		out := &createAccountOutput{}
		out.Body.AccountSid, out.Body.Name, out.Body.APIToken, out.Body.WebhookSecret = acct.Sid, acct.Name, token, acct.WebhookSecret
		out.Body.StatusWebhookSecret = statushooks.SigningSecret(acct.WebhookSecret)
		return out, nil
	})
}
