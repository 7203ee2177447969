package outbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/decide"
	"github.com/switchboard-voice/switchboard/outbox/internal/dispatch"
	"github.com/switchboard-voice/switchboard/outbox/internal/filter"
	"github.com/switchboard-voice/switchboard/outbox/internal/ids"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Limits on published events.
const (
	maxIDLen     = 128
	maxTypeLen   = 128
	maxEventData = 256 << 10
)

// PingEventType is the type of the event Ping sends (docs/outbox.md §3, every profile).
const PingEventType = "settings.webhook.ping"

// Publish stores ev and one delivery per matching endpoint of its account, in one
// transaction, and returns once they are durable. An ev.ID that exists already returns
// the stored event and its deliveries (Published.Duplicate) and sends nothing again.
// Bad input is a *ValidationError and stores nothing; a store that cannot write is
// ErrUnavailable. When ctx ends before the event is stored, Publish returns ctx's
// error and nothing is stored.
func (o *Outbox) Publish(ctx context.Context, ev Event) (Published, error) {
	return o.publish(ctx, nil, ev, nil, idempotency{})
}

// IdempotencyWindow is how long an Idempotency-Key answers with the event it
// published (PublishOptions.IdempotencyKey).
const IdempotencyWindow = 24 * time.Hour

// maxIdempotencyKeyLen bounds an Idempotency-Key.
const maxIdempotencyKeyLen = 255

// PublishOptions are the optional inputs of PublishWith.
type PublishOptions struct {
	// EndpointID, when set, addresses the event to that endpoint alone, as
	// PublishTo does.
	EndpointID string
	// IdempotencyKey, when set, makes the publish answer, for IdempotencyWindow,
	// every publish of the same key in the account with what it published (the
	// same event and its deliveries, Published.Duplicate set), and fail one of the
	// same key with other content (event, id, createdAt, channels or endpoint)
	// with ErrConflict. 1 to 255 visible ASCII characters.
	IdempotencyKey string
}

// PublishWith is Publish (or PublishTo, with opts.EndpointID) with options.
func (o *Outbox) PublishWith(ctx context.Context, ev Event, opts PublishOptions) (Published, error) {
	key := opts.IdempotencyKey
	if key != "" && (len(key) > maxIdempotencyKeyLen || !printableWithSpace(key)) {
		return Published{}, invalid("idempotencyKey", "1 to %d visible ASCII characters", maxIdempotencyKeyLen)
	}
	var idem idempotency
	if key != "" {
		idem = idempotency{key: key, fingerprint: publishFingerprint(ev, opts.EndpointID)}
	}
	if opts.EndpointID != "" {
		return o.publishTo(ctx, ev, opts.EndpointID, idem)
	}
	return o.publish(ctx, nil, ev, nil, idem)
}

// idempotency is a publish's Idempotency-Key, with the fingerprint of its request.
type idempotency struct{ key, fingerprint string }

// PublishTx is Publish inside the caller's transaction on the store's database: the
// event and its deliveries commit or roll back with the caller's own changes, so
// nothing is sent for a change that was rolled back. tx is of the type the store
// writes in: a *sql.Tx begun on DB() for the SQLite store; the PostgreSQL store takes
// a pgx.Tx or a *sql.Tx. Another type, or a nil tx, is a *ValidationError and stores
// nothing; an error leaves tx to the caller, who should roll it back. Deliveries
// become visible to the dispatcher when tx commits, which finds them within
// Config.PollInterval.
func (o *Outbox) PublishTx(ctx context.Context, tx any, ev Event) (Published, error) {
	if tx == nil {
		return Published{}, invalid("tx", "nil transaction")
	}
	return o.publish(ctx, tx, ev, nil, idempotency{})
}

// Ping sends a settings.webhook.ping event to one endpoint whatever events it chose,
// and returns its delivery. An endpoint that is not there is ErrNotFound; a disabled
// one, which takes no deliveries, ErrEndpointNotActive.
func (o *Outbox) Ping(ctx context.Context, account, endpointID string) (Delivery, error) {
	if _, err := o.store.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: account, ID: endpointID}); err != nil {
		return Delivery{}, err
	}
	ev := Event{Account: account, Type: PingEventType, Data: json.RawMessage(`{}`)}
	pub, err := o.publish(ctx, nil, ev, func(ep Endpoint) bool { return ep.ID == endpointID }, idempotency{})
	if err != nil {
		return Delivery{}, err
	}
	if len(pub.Deliveries) == 0 {
		return Delivery{}, fmt.Errorf("%w: endpoint %s takes no deliveries (disabled)", ErrEndpointNotActive, endpointID)
	}
	return pub.Deliveries[0], nil
}

func (o *Outbox) publish(ctx context.Context, tx any, ev Event, only func(Endpoint) bool, idem idempotency) (Published, error) {
	now := o.now()
	createdAtGiven := !ev.CreatedAt.IsZero()
	if err := validateEvent(&ev, now); err != nil {
		return Published{}, err
	}
	if ev.Type != PingEventType {
		if err := o.checkData(ctx, ev); err != nil {
			return Published{}, err
		}
	}
	// Deliveries stored in the caller's transaction become visible when it commits,
	// which may never happen: only the outbox's own publishes are handed over.
	var hand *dispatch.Handoff
	if d := o.disp.Load(); d != nil && tx == nil {
		hand = d.Handoff()
	}
	// The event's data as filters read it, decoded once, for the first endpoint
	// with a filter.
	var (
		data    any
		decoded bool
	)
	excluded := map[string]bool{}
	plan := func(ep Endpoint) (Delivery, *Attempt, bool) {
		excluded[ep.ID] = false // a store may plan again (a retried transaction)
		if only != nil {
			if !only(ep) {
				return Delivery{}, nil, false
			}
		} else if !ep.Wants(ev.Type) || !outboxdriver.TakesChannels(ep.Channels, ev.Channels) {
			return Delivery{}, nil, false
		} else if f := o.filters.of(ep); f != nil {
			if !decoded {
				data, _ = filter.Decode(ev.Data) // validated: compact JSON
				decoded = true
			}
			if !f.Match(data) {
				excluded[ep.ID] = true
				return Delivery{}, nil, false
			}
		}
		d, a, ok := decide.Plan(o.policyOf(ep), ev, ep, ids.New("dlv"), now)
		// A rate-limited endpoint's deliveries are claimed, where its bucket is kept.
		if ok && hand != nil && d.Status == DeliveryPending && ep.Status == EndpointActive && ep.RateLimit == 0 && hand.Take(d.ID, ep) {
			lease := now.Add(o.cfg.LeaseDuration)
			d.LeaseUntil = &lease
		}
		return d, a, ok
	}
	exclude := func(ep Endpoint) string {
		if excluded[ep.ID] {
			return ExcludedByFilter
		}
		return ""
	}
	params := outboxdriver.PublishParams{Tx: tx, Event: ev, Now: now, Plan: plan, Exclude: exclude}
	if idem.key != "" {
		params.IdempotencyKey, params.Fingerprint, params.KeySince = idem.key, idem.fingerprint, now.Add(-IdempotencyWindow)
	}
	pub, err := o.store.Publish(ctx, params)
	handedAll := false
	if hand != nil {
		handedAll = hand.Finish(pub, err)
	}
	if err != nil {
		return Published{}, err
	}
	if pub.Duplicate && pub.Event.ID == ev.ID {
		// The store compares what every publish has; a createdAt the publisher gave
		// and the channels are part of the event's content too (a publish without
		// createdAt is stamped now).
		if createdAtGiven && !pub.Event.CreatedAt.Equal(ev.CreatedAt) {
			return Published{}, fmt.Errorf("%w: event %s exists with createdAt %s, not %s", ErrConflict, ev.ID,
				pub.Event.CreatedAt.Format(time.RFC3339Nano), ev.CreatedAt.Format(time.RFC3339Nano))
		}
		if !slices.Equal(pub.Event.Channels, ev.Channels) {
			return Published{}, fmt.Errorf("%w: event %s exists with channels %v, not %v", ErrConflict, ev.ID,
				pub.Event.Channels, ev.Channels)
		}
	}
	if tx == nil && !pub.Duplicate && !handedAll {
		o.nudge()
	}
	return pub, nil
}

// publishFingerprint identifies a publish's request for its Idempotency-Key: what
// the publisher gave of the event (its id and createdAt only when given) and the
// endpoint it was addressed to.
func publishFingerprint(ev Event, endpointID string) string {
	data, err := compactJSON(ev.Data)
	if err != nil {
		data = ev.Data // refused by validateEvent before the fingerprint matters
	}
	var created string
	if !ev.CreatedAt.IsZero() {
		created = ev.CreatedAt.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal([]any{ev.ID, ev.Type, created, ev.Channels, json.RawMessage(data), endpointID})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// validateEvent checks ev and fills its defaults (id, createdAt).
func validateEvent(ev *Event, now time.Time) error {
	if ev.Account == "" {
		return invalid("account", "required")
	}
	if ev.Type == "" || len(ev.Type) > maxTypeLen || !printable(ev.Type) {
		return invalid("type", "must be 1 to %d visible ASCII characters", maxTypeLen)
	}
	if ev.ID == "" {
		ev.ID = ids.New("evt")
	} else if err := checkID(ev.ID); err != nil {
		return invalid("id", "%s", err)
	}
	var err error
	if ev.Channels, err = checkChannels("channels", ev.Channels, maxEventChannels); err != nil {
		return err
	}
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = now
	}
	ev.CreatedAt = ev.CreatedAt.UTC().Truncate(time.Microsecond)
	if len(ev.Data) == 0 {
		ev.Data = json.RawMessage("null")
	}
	if len(ev.Data) > maxEventData {
		return invalid("data", "larger than %d bytes", maxEventData)
	}
	// Compact, so that a publisher retrying with the same JSON spaced otherwise is a
	// duplicate, not a conflict (json.Compact also validates).
	var compact bytes.Buffer
	if err := json.Compact(&compact, ev.Data); err != nil {
		return invalid("data", "not valid JSON")
	}
	ev.Data = compact.Bytes()
	return nil
}

// checkID accepts ids that can travel in webhook-id: 1 to 128 of A-Z a-z 0-9 _ - :.
func checkID(id string) error {
	if len(id) > maxIDLen {
		return fmt.Errorf("longer than %d characters", maxIDLen)
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == ':'
		if !ok {
			return fmt.Errorf("character %q not allowed (letters, digits, _ - : only)", c)
		}
	}
	return nil
}

func printable(s string) bool {
	for _, c := range []byte(s) {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// printableWithSpace reports whether s is visible ASCII and spaces, not empty.
func printableWithSpace(s string) bool {
	for _, c := range []byte(s) {
		if c < ' ' || c > '~' {
			return false
		}
	}
	return s != ""
}
