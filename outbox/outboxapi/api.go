package outboxapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// Principal is what a bearer token stands for.
type Principal struct {
	// Account is the account the token acts for: every route is scoped to it.
	Account string
	// Actor names the token in the audit log (its id, never the token itself).
	Actor string
}

// ErrUnauthenticated is what Config.Authenticate returns (or wraps) for a token it
// does not know: the request answers 401.
var ErrUnauthenticated = errors.New("outboxapi: unknown bearer token")

// Config configures the API. Zero values take the defaults documented per field.
type Config struct {
	// Outbox serves every route. Required.
	Outbox *outbox.Outbox
	// Authenticate resolves the bearer token of a request (the text after
	// "Bearer "). An error wrapping ErrUnauthenticated answers 401; a
	// huma.StatusError is answered as it is, its headers included (a 429 with
	// Retry-After, from a limit on failed tokens); any other, 500. Required.
	Authenticate func(ctx context.Context, token string) (Principal, error)
	// FromContext, when set, authenticates a request that carries no bearer token by
	// its context: a caller the embedding program authenticated itself and serves
	// in-process (the node's web console). ok false leaves the request
	// unauthenticated (401); an error wrapping ErrUnauthenticated answers 401, any
	// other 500. Default none.
	FromContext func(ctx context.Context) (p Principal, ok bool, err error)
	// Egress checks the URL of an endpoint created or changed, as the outbox's
	// client will (scheme, user-info, IP literals, denied host names): a refused URL
	// is bad input, not an endpoint whose every attempt is refused. Give the rules of
	// the outbox's client. Default transport.PublicOnly().
	Egress *transport.EgressRules
	// Logger receives the errors answered 500. Default: the zero Logger (discarded).
	Logger zerolog.Logger
	// Clock places the window of the attempt statistics. Default the wall clock;
	// give the outbox's.
	Clock retry.Clock
}

// WithDefaults returns c with every zero value replaced by its default.
func (c Config) WithDefaults() Config {
	if c.Egress == nil {
		r := transport.PublicOnly()
		c.Egress = &r
	}
	if c.Clock == nil {
		c.Clock = retry.SystemClock{}
	}
	return c
}

// ErrInvalidConfig is wrapped by the error of a Config that is missing a required field.
var ErrInvalidConfig = errors.New("outboxapi: invalid config")

// validate reports every missing field at once.
func (c Config) validate() error {
	var errs []error
	if c.Outbox == nil {
		errs = append(errs, errors.New("outboxapi: Config.Outbox is required"))
	}
	if c.Authenticate == nil {
		errs = append(errs, errors.New("outboxapi: Config.Authenticate is required"))
	}
	if len(errs) > 0 {
		return errors.Join(append([]error{ErrInvalidConfig}, errs...)...)
	}
	return nil
}

// server holds what every handler needs.
type server struct {
	cfg Config
	ob  *outbox.Outbox
	api huma.API
}

// Register adds every route of the API to api, under /api/v1, with the bearer
// security scheme "bearerAuth" in its OpenAPI document. A bad cfg is an error
// wrapping ErrInvalidConfig and registers nothing.
func Register(api huma.API, cfg Config) error {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	s := &server{cfg: cfg, ob: cfg.Outbox, api: api}
	doc := api.OpenAPI()
	if doc.Components == nil {
		doc.Components = &huma.Components{}
	}
	if doc.Components.SecuritySchemes == nil {
		doc.Components.SecuritySchemes = map[string]*huma.SecurityScheme{}
	}
	doc.Components.SecuritySchemes[securityScheme] = &huma.SecurityScheme{
		Type: "http", Scheme: "bearer", Description: "An API token of the account: every route is scoped to its account.",
	}
	s.registerEvents()
	s.registerWebhooks()
	s.registerDeliveries()
	s.registerAudit()
	s.registerStats()
	s.registerEventTypes()
	return nil
}

// Handler serves the API alone: its routes and /openapi.json on a new ServeMux, for
// a program that has no huma API of its own.
func Handler(cfg Config, title, version string) (http.Handler, error) {
	mux := http.NewServeMux()
	config := huma.DefaultConfig(title, version)
	config.CreateHooks = nil // no $schema links in bodies
	config.DocsPath = ""
	config.RejectUnknownQueryParameters = true
	if err := Register(humago.New(mux, config), cfg); err != nil {
		return nil, err
	}
	return mux, nil
}

const securityScheme = "bearerAuth"

// errMissingToken is a request that names no caller.
var errMissingToken = errors.New("missing bearer token")

// principalKey holds the request's Principal, set by authenticate.
type principalKey struct{}

// operation is the huma operation of a route: authenticated before its input is
// decoded, so an anonymous caller learns nothing of the API's validation rules.
func (s *server) operation(id, method, path, summary string, status int) huma.Operation {
	return huma.Operation{
		OperationID: id, Method: method, Path: path, Summary: summary, Tags: []string{"Webhooks"},
		DefaultStatus: status, MaxBodyBytes: maxBody,
		Security:    []map[string][]string{{securityScheme: {}}},
		Middlewares: huma.Middlewares{s.authenticate},
		Errors:      []int{http.StatusUnauthorized, http.StatusNotFound, http.StatusUnprocessableEntity},
	}
}

// maxBody bounds request bodies: an event's data is at most 256 KiB.
const maxBody = 512 << 10

func (s *server) authenticate(ctx huma.Context, next func(huma.Context)) {
	token := bearer(ctx.Header("Authorization"))
	var (
		p   Principal
		err error
	)
	switch {
	case token != "":
		p, err = s.cfg.Authenticate(ctx.Context(), token)
	case s.cfg.FromContext != nil && ctx.Header("Authorization") == "":
		var ok bool
		if p, ok, err = s.cfg.FromContext(ctx.Context()); !ok && err == nil {
			err = errMissingToken
		}
	default:
		err = errMissingToken
	}
	if errors.Is(err, errMissingToken) {
		ctx.SetHeader("WWW-Authenticate", `Bearer realm="switchboard"`)
		_ = huma.WriteErr(s.api, ctx, http.StatusUnauthorized, "missing bearer token")
		return
	}
	if errors.Is(err, ErrUnauthenticated) || err == nil && p.Account == "" {
		ctx.SetHeader("WWW-Authenticate", `Bearer realm="switchboard", error="invalid_token"`)
		_ = huma.WriteErr(s.api, ctx, http.StatusUnauthorized, "invalid bearer token")
		return
	}
	var refused huma.StatusError
	if errors.As(err, &refused) {
		var withHeaders huma.HeadersError
		if errors.As(err, &withHeaders) {
			for k, vs := range withHeaders.GetHeaders() {
				for _, v := range vs {
					ctx.AppendHeader(k, v)
				}
			}
		}
		_ = huma.WriteErr(s.api, ctx, refused.GetStatus(), refused.Error())
		return
	}
	if err != nil {
		s.cfg.Logger.Error().Err(err).Msg("outboxapi: authenticating a request failed")
		_ = huma.WriteErr(s.api, ctx, http.StatusInternalServerError, "internal error")
		return
	}
	next(huma.WithValue(ctx, principalKey{}, p))
}

// principal is the request's Principal (authenticate ran before every handler).
func principal(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

// actor is the audit actor of the request, with the operator's reason if any.
func actor(ctx context.Context, reason string) outbox.Actor {
	return outbox.Actor{ID: principal(ctx).Actor, Reason: reason}
}

func bearer(header string) string {
	const prefix = "bearer "
	if len(header) > len(prefix) && strings.EqualFold(header[:len(prefix)], prefix) {
		return strings.TrimSpace(header[len(prefix):])
	}
	return ""
}
