package featureserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/rs/zerolog"
)

// maxRequestBody bounds every API request body: calls, applications and scenarios
// are small, and a huge body is refused with 413 before it is read.
const maxRequestBody = 256 << 10

// API serves the node's REST API (JSON, RFC 9457 problem documents, an OpenAPI
// document at /openapi.json) on a ServeMux.
type API struct {
	store *Store
	calls *CallManager
	admin string
	log   zerolog.Logger
}

// AccountParams are the path and header of every account-scoped operation.
type AccountParams struct {
	Account       string `path:"account" doc:"Account sid" maxLength:"64"`
	Authorization string `header:"Authorization" doc:"Bearer API token of the account"`
}

// newAPI registers the API's operations on mux, then those mount adds (the outbox
// API), so that every route is in the one OpenAPI document.
func newAPI(mux *http.ServeMux, store *Store, calls *CallManager, adminToken, version string, log zerolog.Logger, mount func(huma.API) error) (*API, error) {
	a := &API{store: store, calls: calls, admin: adminToken, log: log}
	config := huma.DefaultConfig("Switchboard feature server", version)
	// No $schema links in bodies: clients of a jambonz-style API do not expect them.
	config.CreateHooks = nil
	config.DocsPath = ""
	config.RejectUnknownQueryParameters = true
	api := humago.New(mux, config)
	api.UseMiddleware(a.authenticateFirst(api))
	a.registerAccounts(api)
	a.registerApplications(api)
	a.registerCalls(api)
	a.registerAlerts(api)
	if mount != nil {
		if err := mount(api); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func bearer(header string) string {
	const prefix = "bearer "
	if len(header) > len(prefix) && strings.EqualFold(header[:len(prefix)], prefix) {
		return strings.TrimSpace(header[len(prefix):])
	}
	return ""
}

// accountKey holds the Account that authenticateFirst resolved for a request.
type accountKey struct{}

// authenticateFirst checks the bearer token before the request is decoded, so an
// anonymous or foreign caller learns nothing about the API's validation rules.
func (a *API) authenticateFirst(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		var err error
		switch {
		case op.OperationID == "create-account":
			err = a.authorizeAdmin(ctx.Header("Authorization"))
		case strings.HasPrefix(op.Path, "/v1/Accounts/{account}"):
			var acct Account
			acct, err = a.authorize(ctx.Context(), AccountParams{Account: ctx.Param("account"), Authorization: ctx.Header("Authorization")})
			if err == nil {
				ctx = huma.WithValue(ctx, accountKey{}, acct)
			}
		}
		if err != nil {
			writeError(api, ctx, err)
			return
		}
		next(ctx)
	}
}

// writeError writes a handler-style error (a huma.StatusError, possibly with headers)
// from a middleware.
func writeError(api huma.API, ctx huma.Context, err error) {
	var withHeaders huma.HeadersError
	if errors.As(err, &withHeaders) {
		for k, vs := range withHeaders.GetHeaders() {
			for _, v := range vs {
				ctx.AppendHeader(k, v)
			}
		}
	}
	status, msg := http.StatusInternalServerError, "internal error"
	var se huma.StatusError
	if errors.As(err, &se) {
		status, msg = se.GetStatus(), se.Error()
	}
	_ = huma.WriteErr(api, ctx, status, msg)
}

// authorize resolves the bearer token and checks it belongs to the account in the
// path. A token of another account gets 404, as if the account did not exist: an
// account can never learn anything about another.
func (a *API) authorize(ctx context.Context, p AccountParams) (Account, error) {
	if acct, ok := ctx.Value(accountKey{}).(Account); ok && acct.Sid == p.Account {
		return acct, nil // already checked by authenticateFirst
	}
	token := bearer(p.Authorization)
	if token == "" {
		return Account{}, huma.ErrorWithHeaders(huma.Error401Unauthorized("missing bearer token"),
			http.Header{"WWW-Authenticate": {`Bearer realm="switchboard"`}})
	}
	acct, err := a.store.AccountByToken(ctx, token)
	if errors.Is(err, ErrNotFound) {
		return Account{}, huma.ErrorWithHeaders(huma.Error401Unauthorized("invalid bearer token"),
			http.Header{"WWW-Authenticate": {`Bearer realm="switchboard", error="invalid_token"`}})
	}
	if err != nil {
		return Account{}, a.internal(err)
	}
	if acct.Sid != p.Account {
		return Account{}, huma.Error404NotFound("account not found")
	}
	return acct, nil
}

func (a *API) authorizeAdmin(header string) error {
	token := bearer(header)
	if a.admin == "" {
		return huma.Error403Forbidden("account creation through the API is disabled: set SWITCHBOARD_ADMIN_TOKEN or use serve --bootstrap")
	}
	if token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(a.admin)) != 1 {
		return huma.ErrorWithHeaders(huma.Error401Unauthorized("invalid admin token"),
			http.Header{"WWW-Authenticate": {`Bearer realm="switchboard"`}})
	}
	return nil
}

// internal logs an unexpected error and hides its details from the client.
func (a *API) internal(err error) error {
	a.log.Error().Err(err).Msg("API request failed")
	return huma.Error500InternalServerError("internal error")
}

// notFoundOr maps ErrNotFound to a 404 problem and anything else to a 500.
func (a *API) notFoundOr(err error, what string) error {
	if errors.Is(err, ErrNotFound) {
		return huma.Error404NotFound(what + " not found")
	}
	return a.internal(err)
}
