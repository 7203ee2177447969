package pgstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/internal/endpointcache"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Times go in as the engine gives them (pgx keeps microseconds, truncating) and come
// back in UTC, as the SQLite store returns them: what a decision sees of a row it
// changed earlier in a batch (normalized) is what a read returns.

func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// normalized is t as a read after writing it returns it.
func normalized(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func normalizedPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := normalized(*t)
	return &u
}

// endpointColumns are an endpoint's columns. Its rate limit's bucket (rate_tat) is
// not among them: only claims read and change it.
const endpointColumns = `id, account, url, events, api_version, secrets, profile, overrides, managed,
	status, failures, failing_since, last_delivery_at, paused_at, pause_reason, disabled_at,
	hold_until, removed_at, created_at, in_flight_cap, headers, channels, filter, rate_limit`

// endpointScan holds the destinations of one endpoint row.
type endpointScan struct {
	ep                         outboxdriver.Endpoint
	events, secrets, overrides []byte
	headers, channels, filter  string
	status                     string
}

func (s *endpointScan) Dest() []any {
	e := &s.ep
	return []any{&e.ID, &e.Account, &e.URL, &s.events, &e.APIVersion, &s.secrets, &e.Profile, &s.overrides,
		&e.Managed, &s.status, &e.Failures, &e.FailingSince, &e.LastDeliveryAt, &e.PausedAt, &e.PauseReason,
		&e.DisabledAt, &e.HoldUntil, &e.RemovedAt, &e.CreatedAt, &e.InFlightCap,
		&s.headers, &s.channels, &s.filter, &e.RateLimit}
}

func (s *endpointScan) endpoint() (outboxdriver.Endpoint, error) {
	ep := s.ep
	ep.Status = outboxdriver.EndpointStatus(s.status)
	ep.FailingSince, ep.LastDeliveryAt, ep.PausedAt = utcPtr(ep.FailingSince), utcPtr(ep.LastDeliveryAt), utcPtr(ep.PausedAt)
	ep.DisabledAt, ep.HoldUntil, ep.RemovedAt = utcPtr(ep.DisabledAt), utcPtr(ep.HoldUntil), utcPtr(ep.RemovedAt)
	ep.CreatedAt = utc(ep.CreatedAt)
	d, err := endpointcache.Decode(&decodedEndpoints, "pgstore", ep.ID, s.events, s.secrets, s.overrides)
	if err != nil {
		return ep, err
	}
	ep.Events, ep.Secrets, ep.Overrides = d.Events, d.Secrets, d.Overrides
	if ep.Headers, ep.Channels, ep.Filter, err = outboxdriver.DecodeRouting(s.headers, s.channels, s.filter); err != nil {
		return ep, fmt.Errorf("pgstore: endpoint %s: %w", ep.ID, err)
	}
	return ep, nil
}

// decodedEndpoints spares a read of an endpoint the decoding of its JSON columns
// when they are as it last read them: a claim returns the endpoint of every delivery
// it takes.
var decodedEndpoints endpointcache.Cache

// endpointJSON is the JSON and text columns of ep.
type endpointJSON struct{ events, secrets, overrides, headers, channels, filter string }

func encodeEndpoint(ep outboxdriver.Endpoint) (endpointJSON, error) {
	events, err := json.Marshal(ep.Events)
	if err != nil {
		return endpointJSON{}, err
	}
	secrets, err := json.Marshal(ep.Secrets)
	if err != nil {
		return endpointJSON{}, err
	}
	overrides, err := json.Marshal(ep.Overrides)
	if err != nil {
		return endpointJSON{}, err
	}
	headers, channels, filter, err := outboxdriver.EncodeRouting(ep)
	if err != nil {
		return endpointJSON{}, err
	}
	return endpointJSON{string(events), string(secrets), string(overrides), headers, channels, filter}, nil
}

// normalizedEndpoint is ep as a read after writing it returns it: times in UTC
// microseconds, JSON columns decoded again.
func normalizedEndpoint(ep outboxdriver.Endpoint) (outboxdriver.Endpoint, error) {
	j, err := encodeEndpoint(ep)
	if err != nil {
		return ep, err
	}
	sc := endpointScan{ep: ep, events: []byte(j.events), secrets: []byte(j.secrets), overrides: []byte(j.overrides),
		headers: j.headers, channels: j.channels, filter: j.filter, status: string(ep.Status)}
	sc.ep.Events, sc.ep.Secrets, sc.ep.Overrides = nil, nil, outboxdriver.Overrides{}
	out, err := sc.endpoint()
	if err != nil {
		return out, err
	}
	for _, t := range []**time.Time{&out.FailingSince, &out.LastDeliveryAt, &out.PausedAt, &out.DisabledAt, &out.HoldUntil, &out.RemovedAt} {
		*t = normalizedPtr(*t)
	}
	out.CreatedAt = normalized(out.CreatedAt)
	return out, nil
}

const deliveryColumns = `id, account, event_id, event_type, endpoint_id, status, attempts, run_start,
	next_attempt_at, lease_until, fault_since, last_error, created_at, updated_at`

type deliveryScan struct {
	d      outboxdriver.Delivery
	status string
}

func (s *deliveryScan) Dest() []any {
	d := &s.d
	return []any{&d.ID, &d.Account, &d.EventID, &d.EventType, &d.EndpointID, &s.status, &d.Attempts, &d.RunStart,
		&d.NextAttemptAt, &d.LeaseUntil, &d.FaultSince, &d.LastError, &d.CreatedAt, &d.UpdatedAt}
}

func (s *deliveryScan) delivery() outboxdriver.Delivery {
	d := s.d
	d.Status = outboxdriver.DeliveryStatus(s.status)
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = utc(d.NextAttemptAt), utc(d.CreatedAt), utc(d.UpdatedAt)
	d.LeaseUntil, d.FaultSince = utcPtr(d.LeaseUntil), utcPtr(d.FaultSince)
	return d
}

// normalizedDelivery is d as a read after writing it returns it.
func normalizedDelivery(d outboxdriver.Delivery) outboxdriver.Delivery {
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = normalized(d.NextAttemptAt), normalized(d.CreatedAt), normalized(d.UpdatedAt)
	d.LeaseUntil, d.FaultSince = normalizedPtr(d.LeaseUntil), normalizedPtr(d.FaultSince)
	return d
}

// Value implements sqlrows.Buffer.
func (s *deliveryScan) Value() (outboxdriver.Delivery, error) { return s.delivery(), nil }

var scanDelivery = sqlrows.Scan[outboxdriver.Delivery, deliveryScan]

func scanDeliveries(rs rows, err error) ([]outboxdriver.Delivery, error) {
	return sqlrows.Collect(nil, rs, err, scanDelivery)
}

const eventColumns = `id, account, type, created_at, data, channels, excluded`

type eventScan struct {
	ev                 outboxdriver.Event
	data               []byte
	channels, excluded string
}

func (s *eventScan) Dest() []any {
	return []any{&s.ev.ID, &s.ev.Account, &s.ev.Type, &s.ev.CreatedAt, &s.data, &s.channels, &s.excluded}
}

// Value implements sqlrows.Buffer.
func (s *eventScan) Value() (outboxdriver.Event, error) { return s.event() }

var scanEvent = sqlrows.Scan[outboxdriver.Event, eventScan]

func (s *eventScan) event() (outboxdriver.Event, error) {
	ev := s.ev
	ev.CreatedAt = utc(ev.CreatedAt)
	ev.Data = json.RawMessage(append([]byte(nil), s.data...))
	var err error
	if ev.Channels, ev.Excluded, err = outboxdriver.DecodeEventRouting(s.channels, s.excluded); err != nil {
		return ev, fmt.Errorf("pgstore: event %s: %w", ev.ID, err)
	}
	return ev, nil
}

const attemptColumns = `delivery_id, number, at, scheduled_at, duration_us, status, class, error, response`

func scanAttempt(r sqlrows.Row) (outboxdriver.Attempt, error) {
	var (
		a     outboxdriver.Attempt
		durUS int64
		class string
	)
	if err := r.Scan(&a.DeliveryID, &a.Number, &a.At, &a.ScheduledAt, &durUS, &a.Status, &class, &a.Error, &a.Response); err != nil {
		return a, err
	}
	a.At, a.ScheduledAt = utc(a.At), utc(a.ScheduledAt)
	a.Duration = time.Duration(durUS) * time.Microsecond
	a.Class = outboxdriver.Class(class)
	return a, nil
}

// Value implements sqlrows.Buffer.
func (s *endpointScan) Value() (outboxdriver.Endpoint, error) { return s.endpoint() }

var scanEndpoint = sqlrows.Scan[outboxdriver.Endpoint, endpointScan]

func scanEndpoints(rs rows, err error) ([]outboxdriver.Endpoint, error) {
	return sqlrows.Collect(nil, rs, err, scanEndpoint)
}

func scanStrings(rs rows, err error) ([]string, error) {
	return sqlrows.Collect(nil, rs, err, sqlrows.String)
}
