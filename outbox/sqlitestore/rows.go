package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/internal/endpointcache"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Times are stored as Unix microseconds, the precision PostgreSQL keeps too.

func micros(t time.Time) int64 { return t.UnixMicro() }

func microsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNull(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// endpointColumns are an endpoint's columns. Its rate limit's bucket (rate_tat) is
// not among them: only claims read and change it.
const endpointColumns = `id, account, url, events, api_version, secrets, profile, overrides, managed,
	status, failures, failing_since, last_delivery_at, paused_at, pause_reason, disabled_at,
	hold_until, removed_at, created_at, in_flight_cap, headers, channels, filter, rate_limit`

// endpointScan holds the destinations of one endpoint row.
type endpointScan struct {
	ep                                        outboxdriver.Endpoint
	events, secrets, overrides                string
	headers, channels, filter                 string
	failing, last, paused, disabled, hold, rm sql.NullInt64
	created                                   int64
	status                                    string
}

func (s *endpointScan) Dest() []any {
	return []any{&s.ep.ID, &s.ep.Account, &s.ep.URL, &s.events, &s.ep.APIVersion, &s.secrets,
		&s.ep.Profile, &s.overrides, &s.ep.Managed, &s.status, &s.ep.Failures, &s.failing, &s.last,
		&s.paused, &s.ep.PauseReason, &s.disabled, &s.hold, &s.rm, &s.created, &s.ep.InFlightCap,
		&s.headers, &s.channels, &s.filter, &s.ep.RateLimit}
}

func (s *endpointScan) endpoint() (outboxdriver.Endpoint, error) {
	ep := s.ep
	ep.Status = outboxdriver.EndpointStatus(s.status)
	ep.FailingSince, ep.LastDeliveryAt, ep.PausedAt = fromNull(s.failing), fromNull(s.last), fromNull(s.paused)
	ep.DisabledAt, ep.HoldUntil, ep.RemovedAt = fromNull(s.disabled), fromNull(s.hold), fromNull(s.rm)
	ep.CreatedAt = fromMicros(s.created)
	d, err := endpointcache.Decode(&decodedEndpoints, "sqlitestore", ep.ID, s.events, s.secrets, s.overrides)
	if err != nil {
		return ep, err
	}
	ep.Events, ep.Secrets, ep.Overrides = d.Events, d.Secrets, d.Overrides
	if ep.Headers, ep.Channels, ep.Filter, err = outboxdriver.DecodeRouting(s.headers, s.channels, s.filter); err != nil {
		return ep, fmt.Errorf("sqlitestore: endpoint %s: %w", ep.ID, err)
	}
	return ep, nil
}

// decodedEndpoints spares a read of an endpoint the decoding of its JSON columns
// when they are as it last read them: a claim reads the endpoint of every delivery
// it takes.
var decodedEndpoints endpointcache.Cache

// endpointArgs are the values of endpointColumns for ep, in order.
func endpointArgs(ep outboxdriver.Endpoint) ([]any, error) {
	events, err := json.Marshal(ep.Events)
	if err != nil {
		return nil, err
	}
	secrets, err := json.Marshal(ep.Secrets)
	if err != nil {
		return nil, err
	}
	overrides, err := json.Marshal(ep.Overrides)
	if err != nil {
		return nil, err
	}
	headers, channels, filter, err := outboxdriver.EncodeRouting(ep)
	if err != nil {
		return nil, err
	}
	return []any{ep.ID, ep.Account, ep.URL, string(events), ep.APIVersion, string(secrets), ep.Profile,
		string(overrides), ep.Managed, string(ep.Status), ep.Failures, microsPtr(ep.FailingSince),
		microsPtr(ep.LastDeliveryAt), microsPtr(ep.PausedAt), ep.PauseReason, microsPtr(ep.DisabledAt),
		microsPtr(ep.HoldUntil), microsPtr(ep.RemovedAt), micros(ep.CreatedAt), ep.InFlightCap,
		headers, channels, filter, ep.RateLimit}, nil
}

// endpointUpdateArgs are the arguments of updateEndpointSQL for ep: every column of
// endpointArgs but id, account and created_at, then the id.
func endpointUpdateArgs(args []any) []any {
	out := make([]any, 0, len(args)-2)
	out = append(out, args[2:18]...)
	out = append(out, args[19:]...)
	return append(out, args[0])
}

const deliveryColumns = `id, account, event_id, event_type, endpoint_id, status, attempts, run_start,
	next_attempt_at, lease_until, fault_since, last_error, created_at, updated_at`

type deliveryScan struct {
	d                      outboxdriver.Delivery
	status                 string
	next, created, updated int64
	lease, fault           sql.NullInt64
}

func (s *deliveryScan) Dest() []any {
	return []any{&s.d.ID, &s.d.Account, &s.d.EventID, &s.d.EventType, &s.d.EndpointID, &s.status,
		&s.d.Attempts, &s.d.RunStart, &s.next, &s.lease, &s.fault, &s.d.LastError, &s.created, &s.updated}
}

func (s *deliveryScan) delivery() outboxdriver.Delivery {
	d := s.d
	d.Status = outboxdriver.DeliveryStatus(s.status)
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = fromMicros(s.next), fromMicros(s.created), fromMicros(s.updated)
	d.LeaseUntil, d.FaultSince = fromNull(s.lease), fromNull(s.fault)
	return d
}

const eventColumns = `id, account, type, created_at, data, channels, excluded`

type eventScan struct {
	ev                 outboxdriver.Event
	created            int64
	data               []byte
	channels, excluded string
}

func (s *eventScan) Dest() []any {
	return []any{&s.ev.ID, &s.ev.Account, &s.ev.Type, &s.created, &s.data, &s.channels, &s.excluded}
}

func (s *eventScan) event() (outboxdriver.Event, error) {
	ev := s.ev
	ev.CreatedAt = fromMicros(s.created)
	ev.Data = json.RawMessage(append([]byte(nil), s.data...))
	var err error
	if ev.Channels, ev.Excluded, err = outboxdriver.DecodeEventRouting(s.channels, s.excluded); err != nil {
		return ev, fmt.Errorf("sqlitestore: event %s: %w", ev.ID, err)
	}
	return ev, nil
}

const attemptColumns = `delivery_id, number, at, scheduled_at, duration_us, status, class, error, response`

func scanAttempt(rows sqlrows.Row) (outboxdriver.Attempt, error) {
	var (
		a                    outboxdriver.Attempt
		at, scheduled, durUS int64
		class                string
	)
	if err := rows.Scan(&a.DeliveryID, &a.Number, &at, &scheduled, &durUS, &a.Status, &class, &a.Error, &a.Response); err != nil {
		return a, err
	}
	a.At, a.ScheduledAt = fromMicros(at), fromMicros(scheduled)
	a.Duration = time.Duration(durUS) * time.Microsecond
	a.Class = outboxdriver.Class(class)
	return a, nil
}

// latestAttemptColumns keep a delivery's latest attempt in its row (migration 0007),
// in attemptColumns' order after delivery_id; attempt_number NULL: none there.
const latestAttemptColumns = `attempt_number, attempt_at, attempt_scheduled_at, attempt_duration_us, attempt_status,
	attempt_class, attempt_error, attempt_response`

// latestAttemptArgs is len(latestAttemptArgs(a)).
const latestAttemptArgCount = 8

// latestAttemptArgs are the values of latestAttemptColumns for a, or NULLs for none.
func latestAttemptArgs(a *outboxdriver.Attempt) []any {
	if a == nil {
		return []any{nil, nil, nil, nil, nil, nil, nil, nil}
	}
	return attemptArgs(*a)[1:]
}

// moveLatestAttemptsSQL moves the latest attempt of the deliveries listed (a JSON
// array of ids) from their rows to outbox_attempts, before a newer one takes its
// place.
const moveLatestAttemptsSQL = `INSERT INTO outbox_attempts (` + attemptColumns + `)
SELECT id, ` + latestAttemptColumns + ` FROM outbox_deliveries
WHERE id IN (SELECT value FROM json_each(?)) AND attempt_number IS NOT NULL`

func attemptArgs(a outboxdriver.Attempt) []any {
	return []any{a.DeliveryID, a.Number, micros(a.At), micros(a.ScheduledAt), a.Duration.Microseconds(),
		a.Status, string(a.Class), a.Error, a.Response}
}

// queryIDs runs a query selecting one text column and returns its values.
func queryIDs(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	return sqlrows.Collect(nil, rows, err, sqlrows.String)
}

// Value implements sqlrows.Buffer.
func (s *deliveryScan) Value() (outboxdriver.Delivery, error) { return s.delivery(), nil }

var scanDelivery = sqlrows.Scan[outboxdriver.Delivery, deliveryScan]

// Value implements sqlrows.Buffer.
func (s *eventScan) Value() (outboxdriver.Event, error) { return s.event() }

var scanEvent = sqlrows.Scan[outboxdriver.Event, eventScan]

// Value implements sqlrows.Buffer.
func (s *endpointScan) Value() (outboxdriver.Endpoint, error) { return s.endpoint() }

var scanEndpoint = sqlrows.Scan[outboxdriver.Endpoint, endpointScan]
