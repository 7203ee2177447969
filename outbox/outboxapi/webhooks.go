package outboxapi

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/outbox"
)

type endpointPath struct {
	ID string `path:"id" maxLength:"128" doc:"Endpoint id"`
}

// reasonInput is the input of an operation on one endpoint that is audited.
type reasonInput struct {
	ID     string `path:"id" maxLength:"128" doc:"Endpoint id"`
	Reason string `query:"reason" maxLength:"500" doc:"Why, for the audit log"`
}

type createWebhookInput struct {
	Body CreateWebhookRequest
}

type updateWebhookInput struct {
	ID   string `path:"id" maxLength:"128" doc:"Endpoint id"`
	Body UpdateWebhookRequest
}

type listWebhooksInput struct {
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page"`
	Limit  int    `query:"limit" minimum:"1" maximum:"500" default:"50"`
}

type webhookOutput struct{ Body WebhookEndpoint }

type webhookSecretOutput struct{ Body WebhookEndpointWithSecret }

type webhookListOutput struct{ Body WebhookList }

type rotateInput struct {
	ID           string `path:"id" maxLength:"128" doc:"Endpoint id"`
	Reason       string `query:"reason" maxLength:"500" doc:"Why, for the audit log"`
	GraceSeconds int    `query:"graceSeconds" minimum:"0" maximum:"604800" doc:"How long the old secret keeps signing beside the new one; default 86400"`
	Body         *RotateSecretRequest
}

func (s *server) registerWebhooks() {
	huma.Register(s.api, s.operation("create-webhook", http.MethodPost, "/api/v1/webhooks",
		"Create an endpoint; the answer shows its secret, once", http.StatusCreated),
		func(ctx context.Context, in *createWebhookInput) (*webhookSecretOutput, error) {
			if err := s.checkURL(in.Body.URL); err != nil {
				return nil, err
			}
			b := in.Body
			spec := outbox.EndpointSpec{Account: principal(ctx).Account, URL: b.URL, Events: b.Events,
				APIVersion: b.APIVersion, Profile: b.Profile, By: actor(ctx, ""),
				Headers: b.Headers, Channels: b.Channels, Filter: b.Filter, RateLimit: b.RateLimit}
			if b.Policy != nil {
				spec.Overrides = *b.Policy
			}
			if b.Secret != "" {
				if _, err := outbox.VerifyingKey(b.Secret); err != nil {
					return nil, s.problem(err, "endpoint")
				}
				spec.Secrets = []string{b.Secret}
			}
			ep, err := s.ob.CreateEndpoint(ctx, spec)
			if err != nil {
				return nil, s.problem(err, "endpoint")
			}
			shown, err := outbox.VerifyingKey(ep.Secrets[0].Key)
			if err != nil {
				return nil, s.problem(err, "endpoint")
			}
			return &webhookSecretOutput{Body: WebhookEndpointWithSecret{WebhookEndpoint: endpointJSON(ep), Secret: shown}}, nil
		})

	huma.Register(s.api, s.operation("list-webhooks", http.MethodGet, "/api/v1/webhooks",
		"The account's endpoints with their health, oldest first", http.StatusOK),
		func(ctx context.Context, in *listWebhooksInput) (*webhookListOutput, error) {
			after, err := cursorKey(cursorEndpoints, in.Cursor)
			if err != nil {
				return nil, err
			}
			eps, err := s.ob.ListEndpoints(ctx, principal(ctx).Account)
			if err != nil {
				return nil, s.problem(err, "endpoints")
			}
			// Oldest first by (createdAt, id): the cursor is that key of the last one
			// listed, so a removal meanwhile shifts nothing.
			if after != "" {
				eps = slices.DeleteFunc(eps, func(ep outbox.Endpoint) bool { return endpointKey(ep) <= after })
			}
			out := &webhookListOutput{}
			out.Body.Data = []WebhookEndpoint{}
			for _, ep := range eps[:min(len(eps), in.Limit)] {
				out.Body.Data = append(out.Body.Data, endpointJSON(ep))
			}
			if len(eps) > in.Limit {
				c := encodeCursor(cursorEndpoints, endpointKey(eps[in.Limit-1]))
				out.Body.NextCursor = &c
			}
			return out, nil
		})

	huma.Register(s.api, s.operation("get-webhook", http.MethodGet, "/api/v1/webhooks/{id}", "Read an endpoint", http.StatusOK),
		func(ctx context.Context, in *endpointPath) (*webhookOutput, error) {
			ep, err := s.ob.GetEndpoint(ctx, principal(ctx).Account, in.ID)
			if err != nil {
				return nil, s.problem(err, "endpoint")
			}
			return &webhookOutput{Body: endpointJSON(ep)}, nil
		})

	huma.Register(s.api, s.operation("update-webhook", http.MethodPatch, "/api/v1/webhooks/{id}",
		"Change an endpoint's URL, events, apiVersion, profile, policy, headers, channels, filter or rate limit; the next attempt uses them", http.StatusOK),
		func(ctx context.Context, in *updateWebhookInput) (*webhookOutput, error) {
			b := in.Body
			if b.URL != nil {
				if err := s.checkURL(*b.URL); err != nil {
					return nil, err
				}
			}
			u := outbox.EndpointUpdate{URL: b.URL, Events: b.Events, APIVersion: b.APIVersion, Profile: b.Profile,
				Overrides: b.Policy, By: actor(ctx, ""), Headers: b.Headers, Channels: b.Channels, RateLimit: b.RateLimit}
			if len(b.Filter) > 0 {
				u.Filter = &b.Filter
			}
			ep, err := s.ob.UpdateEndpoint(ctx, principal(ctx).Account, in.ID, u)
			if err != nil {
				return nil, s.problem(err, "endpoint")
			}
			return &webhookOutput{Body: endpointJSON(ep)}, nil
		})

	huma.Register(s.api, s.operation("delete-webhook", http.MethodDelete, "/api/v1/webhooks/{id}",
		"Remove an endpoint: its waiting deliveries are dropped; its delivery log stays readable", http.StatusNoContent),
		func(ctx context.Context, in *reasonInput) (*struct{}, error) {
			if err := s.ob.RemoveEndpoint(ctx, principal(ctx).Account, in.ID, actor(ctx, in.Reason)); err != nil {
				return nil, s.problem(err, "endpoint")
			}
			return nil, nil
		})

	huma.Register(s.api, s.operation("pause-webhook", http.MethodPost, "/api/v1/webhooks/{id}/pause",
		"Pause an endpoint (reason MANUAL)", http.StatusOK), s.changeEndpoint(s.ob.Pause))

	huma.Register(s.api, s.operation("resume-webhook", http.MethodPost, "/api/v1/webhooks/{id}/resume",
		"Resume a paused endpoint: failures and hold cleared, held deliveries released", http.StatusOK), s.changeEndpoint(s.ob.Resume))

	huma.Register(s.api, s.operation("rotate-webhook-secret", http.MethodPost, "/api/v1/webhooks/{id}/rotate-secret",
		"A new secret first; the old ones keep signing for the grace period (attempts carry both signatures)", http.StatusOK),
		func(ctx context.Context, in *rotateInput) (*webhookSecretOutput, error) {
			grace, by := time.Duration(in.GraceSeconds)*time.Second, actor(ctx, in.Reason)
			var (
				ep    outbox.Endpoint
				shown string
				err   error
			)
			if in.Body != nil && in.Body.Secret != "" {
				ep, shown, err = s.ob.RotateSecretTo(ctx, principal(ctx).Account, in.ID, in.Body.Secret, grace, by)
			} else {
				ep, shown, err = s.ob.RotateSecret(ctx, principal(ctx).Account, in.ID, grace, by)
			}
			if err != nil {
				return nil, s.problem(err, "endpoint")
			}
			return &webhookSecretOutput{Body: WebhookEndpointWithSecret{WebhookEndpoint: endpointJSON(ep), Secret: shown}}, nil
		})

	huma.Register(s.api, s.operation("ping-webhook", http.MethodPost, "/api/v1/webhooks/{id}/ping",
		"Send a settings.webhook.ping event to the endpoint whatever events it takes; answers the delivery", http.StatusAccepted),
		func(ctx context.Context, in *endpointPath) (*deliveryOutput, error) {
			d, err := s.ob.Ping(ctx, principal(ctx).Account, in.ID)
			if err != nil {
				return nil, s.problem(err, "endpoint")
			}
			return &deliveryOutput{Body: deliveryJSON(d)}, nil
		})
}

// changeEndpoint is the handler of an operation that changes the path's endpoint
// with change, for the reason given, and answers the endpoint as it is then.
func (s *server) changeEndpoint(change func(ctx context.Context, account, id string, by outbox.Actor) (outbox.Endpoint, error)) func(context.Context, *reasonInput) (*webhookOutput, error) {
	return func(ctx context.Context, in *reasonInput) (*webhookOutput, error) {
		ep, err := change(ctx, principal(ctx).Account, in.ID, actor(ctx, in.Reason))
		if err != nil {
			return nil, s.problem(err, "endpoint")
		}
		return &webhookOutput{Body: endpointJSON(ep)}, nil
	}
}

// endpointKey orders endpoints as ListEndpoints does: by creation, then id.
func endpointKey(ep outbox.Endpoint) string {
	return strconv.FormatInt(ep.CreatedAt.UnixMicro(), 10) + "|" + ep.ID
}

// checkURL refuses, as bad input naming body.url, a URL that is not absolute http(s)
// or that the egress rules refuse before any lookup (user-info, an IP literal or
// numeric host they refuse, a denied name).
func (s *server) checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return huma.Error422UnprocessableEntity("invalid endpoint", &huma.ErrorDetail{Location: "body.url",
			Message: "must be an absolute http or https URL", Value: raw})
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return huma.Error422UnprocessableEntity("invalid endpoint", &huma.ErrorDetail{Location: "body.url",
			Message: "scheme " + strconv.Quote(u.Scheme) + " not allowed: http or https", Value: raw})
	}
	if err := s.cfg.Egress.CheckURL(u); err != nil {
		var shown any = raw
		if u.User != nil {
			shown = nil // it would echo a password
		}
		return huma.Error422UnprocessableEntity("invalid endpoint", &huma.ErrorDetail{Location: "body.url",
			Message: "refused: " + err.Error(), Value: shown})
	}
	return nil
}
