package nodeapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/retry"
)

// maxRequestBody bounds every API request body: calls, applications and scenarios
// are small, and a huge body is refused with 413 before it is read.
const maxRequestBody = 256 << 10

// Options configure the API. Zero values take the defaults documented per field.
type Options struct {
	// Store keeps the accounts, applications and alerts the API reads and writes.
	// Required.
	Store nodestore.Store
	// Calls starts, reads and controls calls. Required.
	Calls *calls.Manager
	// AdminToken, when set, may create accounts. Default none: account creation
	// through the API is refused with 403.
	AdminToken string
	// Version is the API's version in the OpenAPI document. Default none.
	Version string
	// CheckNoticeURL checks the operational webhook URL an account sets for its
	// endpoint notices against the node's egress rules (transport.EgressRules.CheckURL).
	// Required.
	CheckNoticeURL func(*url.URL) error
	// MessageStatus, when set, sends an SMS message's status to its actionHook (an
	// absolute URL); without it the status is only recorded.
	MessageStatus func(ctx context.Context, acct nodestore.Account, hook string, payload map[string]any) error
	// SecretRotated, when set, is told of an account's webhook secret rotation
	// (old and new account, and the grace period of the old secret), so that what
	// signs with secrets derived from it (the status hook endpoints of the outbox)
	// rotates too. Its error is logged; the rotation stands. Default none.
	SecretRotated func(ctx context.Context, old, rotated nodestore.Account, grace time.Duration) error
	// Mount, when set, registers more operations on the same huma API after the
	// node's own (the outbox API), so that every route is in the one OpenAPI
	// document. Default none.
	Mount func(huma.API) error
	// Node is this node's id, sent with the live control it forwards to the node
	// that runs a call (ForwardedHeader). Default none.
	Node string
	// Peers sends that live control. Default: a client of its own with a 10 s
	// timeout.
	Peers *http.Client
	// Limiter, when set, limits failed authentication (wrong bearer or admin
	// tokens): a client or account past its budget gets 429 with Retry-After before
	// its token is checked. Default none.
	Limiter Limiter
	// Clock stamps new accounts, applications and notice settings. Default the wall
	// clock.
	Clock retry.Clock
	// Logger receives the errors that answer 500, whose details clients do not see.
	// Default: the zero Logger, which discards them.
	Logger zerolog.Logger
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	if o.Peers == nil {
		o.Peers = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Limiter == nil {
		o.Limiter = noLimit{}
	}
	return o
}

// validate reports every bad value at once.
func (o Options) validate() error {
	var errs []error
	if o.Store == nil {
		errs = append(errs, errors.New("nodeapi: Options.Store is required"))
	}
	if o.Calls == nil {
		errs = append(errs, errors.New("nodeapi: Options.Calls is required"))
	}
	if o.CheckNoticeURL == nil {
		errs = append(errs, errors.New("nodeapi: Options.CheckNoticeURL is required"))
	}
	return errors.Join(errs...)
}

// Limiter limits failed authentication by the client of a request's context and the
// account it names (package authlimit's Limiter).
type Limiter interface {
	// Check reports whether an authentication may be tried now, or how long until.
	Check(ctx context.Context, account string) (time.Duration, bool)
	// Failed counts a failed one; Succeeded records a success for account.
	Failed(ctx context.Context, account string)
	Succeeded(ctx context.Context, account string)
}

// noLimit limits nothing.
type noLimit struct{}

func (noLimit) Check(context.Context, string) (time.Duration, bool) { return 0, true }
func (noLimit) Failed(context.Context, string)                      {}
func (noLimit) Succeeded(context.Context, string)                   {}

// API serves the node's REST API.
type API struct {
	limiter        Limiter
	store          nodestore.Store
	calls          *calls.Manager
	admin          string
	checkNoticeURL func(*url.URL) error
	clock          retry.Clock
	log            zerolog.Logger
	node           string
	peers          *http.Client
	secretRotated  func(ctx context.Context, old, rotated nodestore.Account, grace time.Duration) error
	messageStatus  func(ctx context.Context, acct nodestore.Account, hook string, payload map[string]any) error
}

// AccountParams are the path and header of every account-scoped operation.
type AccountParams struct {
	Account       string `path:"account" doc:"Account sid" maxLength:"64"`
	Authorization string `header:"Authorization" doc:"Bearer API token of the account"`
}

// accountScoped is the input of an account-scoped operation: one that embeds
// AccountParams.
type accountScoped interface{ accountParams() AccountParams }

func (p AccountParams) accountParams() AccountParams { return p }

// registerForAccount registers an account-scoped operation whose handler runs with
// the account the request is authorized for (authorize); a request it refuses
// gets authorize's error and never reaches handle.
func registerForAccount[I, O any, P interface {
	*I
	accountScoped
}](a *API, api huma.API, op huma.Operation, handle func(ctx context.Context, acct nodestore.Account, in *I) (*O, error)) {
	huma.Register(api, op, func(ctx context.Context, in *I) (*O, error) {
		acct, err := a.authorize(ctx, P(in).accountParams())
		if err != nil {
			return nil, err
		}
		return handle(ctx, acct, in)
	})
}

// viewsOf is each row as the API shows it: an empty list, never null, for none.
func viewsOf[Row, View any](rows []Row, view func(Row) View) []View {
	views := make([]View, len(rows))
	for i, row := range rows {
		views[i] = view(row)
	}
	return views
}

// Register registers the API's operations, then those of o.Mount, and the OpenAPI
// document on mux. A bad option is an error naming every bad one, and nothing is
// registered; an error of o.Mount is returned as it is. Serve mux through Handler.
func Register(mux *http.ServeMux, o Options) error {
	o = o.WithDefaults()
	if err := o.validate(); err != nil {
		return err
	}
	a := &API{limiter: o.Limiter, store: o.Store, calls: o.Calls, admin: o.AdminToken, checkNoticeURL: o.CheckNoticeURL, clock: o.Clock, log: o.Logger,
		node: o.Node, peers: o.Peers, secretRotated: o.SecretRotated, messageStatus: o.MessageStatus}
	config := huma.DefaultConfig("Switchboard feature server", o.Version)
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
	a.registerMessages(api)
	a.registerRecentCalls(api)
	a.registerNotifications(api)
	a.registerAggregates(api)
	if o.Mount != nil {
		if err := o.Mount(api); err != nil {
			return err
		}
	}
	describe(api)
	return nil
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
		case adminOperations[op.OperationID]:
			err = a.authorizeAdmin(ctx.Context(), ctx.Header("Authorization"))
		case strings.HasPrefix(op.Path, "/v1/Accounts/{account}"):
			var acct nodestore.Account
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
func (a *API) authorize(ctx context.Context, p AccountParams) (nodestore.Account, error) {
	if acct, ok := ctx.Value(accountKey{}).(nodestore.Account); ok && acct.Sid == p.Account {
		return acct, nil // already checked by authenticateFirst
	}
	acct, err := a.accountOfToken(ctx, p.Authorization, p.Account)
	if err != nil {
		return nodestore.Account{}, err
	}
	if acct.Sid != p.Account {
		return nodestore.Account{}, huma.Error404NotFound("account not found")
	}
	return acct, nil
}

// accountOfToken resolves the bearer token of an Authorization header, for a
// request naming account (empty: none): 401 when there is none or it is no
// account's, 429 while the client or the account is past its budget of failures
// (Options.Limiter). An in-process request without the header acts for its Caller
// (WithCaller), if any.
func (a *API) accountOfToken(ctx context.Context, header, account string) (nodestore.Account, error) {
	token := bearer(header)
	if c, ok := CallerOf(ctx); ok && header == "" {
		acct, err := ResolveCaller(ctx, a.store, c)
		if errors.Is(err, ErrCallerRevoked) {
			return nodestore.Account{}, huma.Error401Unauthorized("the session's API token was revoked")
		}
		if err != nil {
			return nodestore.Account{}, a.internal(err)
		}
		return acct, nil
	}
	if token == "" {
		return nodestore.Account{}, huma.ErrorWithHeaders(huma.Error401Unauthorized("missing bearer token"),
			http.Header{"WWW-Authenticate": {`Bearer realm="switchboard"`}})
	}
	if wait, ok := a.limiter.Check(ctx, account); !ok {
		return nodestore.Account{}, TooManyFailures(wait)
	}
	acct, err := a.store.AccountByToken(ctx, nodestore.HashToken(token))
	if errors.Is(err, nodestore.ErrNotFound) {
		a.limiter.Failed(ctx, account)
		return nodestore.Account{}, huma.ErrorWithHeaders(huma.Error401Unauthorized("invalid bearer token"),
			http.Header{"WWW-Authenticate": {`Bearer realm="switchboard", error="invalid_token"`}})
	}
	if err != nil {
		return nodestore.Account{}, a.internal(err)
	}
	a.limiter.Succeeded(ctx, acct.Sid)
	return acct, nil
}

// TooManyFailures is the answer to a client or account past its budget of failed
// authentications: 429 with Retry-After in whole seconds (at least 1).
func TooManyFailures(wait time.Duration) error {
	secs := max(int64((wait+time.Second-1)/time.Second), 1)
	return huma.ErrorWithHeaders(huma.NewError(http.StatusTooManyRequests, "too many failed authentications: retry later"),
		http.Header{"Retry-After": {strconv.FormatInt(secs, 10)}})
}

func (a *API) authorizeAdmin(ctx context.Context, header string) error {
	token := bearer(header)
	if a.admin == "" {
		return huma.Error403Forbidden("account administration through the API is disabled: set SWITCHBOARD_ADMIN_TOKEN or use serve --bootstrap")
	}
	if wait, ok := a.limiter.Check(ctx, ""); !ok {
		return TooManyFailures(wait)
	}
	if token == "" || !sameSecret(token, a.admin) {
		if token != "" {
			a.limiter.Failed(ctx, "")
		}
		return huma.ErrorWithHeaders(huma.Error401Unauthorized("invalid admin token"),
			http.Header{"WWW-Authenticate": {`Bearer realm="switchboard"`}})
	}
	return nil
}

// sameSecret compares two secrets in constant time, their lengths included: it
// compares their SHA-256 digests.
func sameSecret(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}

// internal logs an unexpected error and hides its details from the client.
func (a *API) internal(err error) error {
	a.log.Error().Err(err).Msg("API request failed")
	return huma.Error500InternalServerError("internal error")
}

// notFoundOr maps ErrNotFound to a 404 problem and anything else to a 500.
func (a *API) notFoundOr(err error, what string) error {
	if errors.Is(err, nodestore.ErrNotFound) {
		return huma.Error404NotFound(what + " not found")
	}
	return a.internal(err)
}
