package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/schema"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// The event-type catalog (docs/outbox.md §1): each account's event types, with a
// description and optionally a JSON Schema that every published event's data of the
// type must pass, and whether the catalog is strict (endpoints then subscribe only
// to its types).

// maxDescriptionLen bounds an event type's description.
const maxDescriptionLen = 2000

// catalogTTL is how long a node keeps what it read of an event type for the check
// of publishes: a change made through another node applies here within it; one made
// through this node applies at once.
const catalogTTL = 2 * time.Second

// maxStrictTypes bounds the event types a strict catalog's check reads.
const maxStrictTypes = 10000

// EventTypeSpec is what CreateEventType needs.
type EventTypeSpec struct {
	Account     string
	Name        string
	Description string
	// Schema, when not empty, is the JSON Schema the data of every event of the
	// type must pass.
	Schema json.RawMessage
}

// EventTypeUpdate changes an event type; nil fields stay as they are.
type EventTypeUpdate struct {
	Description *string
	// Schema replaces the schema; an empty one removes it.
	Schema *json.RawMessage
	// Archived archives the type (true) or restores it (false).
	Archived *bool
}

// CreateEventType adds a type to the account's catalog. Bad input is a
// *ValidationError (a schema that does not compile names the place in it: field
// "schema.properties.amount.type"); a name the catalog has already, archived or not,
// is ErrConflict.
func (o *Outbox) CreateEventType(ctx context.Context, spec EventTypeSpec) (EventType, error) {
	if spec.Account == "" {
		return EventType{}, invalid("account", "required")
	}
	if spec.Name == "" || len(spec.Name) > maxTypeLen || !printable(spec.Name) || spec.Name == "*" {
		return EventType{}, invalid("name", "must be 1 to %d visible ASCII characters, not *", maxTypeLen)
	}
	now := o.now()
	t := EventType{Account: spec.Account, Name: spec.Name, Description: spec.Description, CreatedAt: now, UpdatedAt: now}
	if err := checkDescription(t.Description); err != nil {
		return EventType{}, err
	}
	var err error
	if t.Schema, err = checkSchema(spec.Schema); err != nil {
		return EventType{}, err
	}
	if err := o.store.CreateEventType(ctx, t); err != nil {
		return EventType{}, err
	}
	o.catalog.forget(t.Account, t.Name)
	return normalizedEventType(t), nil
}

// GetEventType returns one type of the account's catalog, archived or not.
func (o *Outbox) GetEventType(ctx context.Context, account, name string) (EventType, error) {
	return o.store.GetEventType(ctx, outboxdriver.GetEventTypeParams{Account: account, Name: name})
}

// ListEventTypes returns the account's event types by name (archived ones when
// q.IncludeArchived), at most q.Limit (default 50, at most 500) after q.AfterName.
func (o *Outbox) ListEventTypes(ctx context.Context, q EventTypeQuery) ([]EventType, error) {
	q.Limit = listLimit(q.Limit)
	return o.store.ListEventTypes(ctx, q)
}

// UpdateEventType changes an event type's description, schema or archived state.
// A new schema applies to the publishes after it (docs/outbox.md §1: other nodes
// within two seconds). Bad input is a *ValidationError and changes nothing.
func (o *Outbox) UpdateEventType(ctx context.Context, account, name string, u EventTypeUpdate) (EventType, error) {
	var newSchema json.RawMessage
	if u.Description != nil {
		if err := checkDescription(*u.Description); err != nil {
			return EventType{}, err
		}
	}
	if u.Schema != nil {
		var err error
		if newSchema, err = checkSchema(*u.Schema); err != nil {
			return EventType{}, err
		}
	}
	now := o.now()
	t, err := o.store.UpdateEventType(ctx, outboxdriver.UpdateEventTypeParams{Account: account, Name: name,
		Change: func(t EventType) (EventType, error) {
			setGiven(&t.Description, u.Description)
			if u.Schema != nil {
				t.Schema = newSchema
			}
			if u.Archived != nil {
				switch {
				case *u.Archived && t.ArchivedAt == nil:
					t.ArchivedAt = &now
				case !*u.Archived:
					t.ArchivedAt = nil
				}
			}
			t.UpdatedAt = now
			return t, nil
		}})
	o.catalog.forget(account, name)
	return t, err
}

// GetCatalog returns the account's catalog settings.
func (o *Outbox) GetCatalog(ctx context.Context, account string) (Catalog, error) {
	return o.store.GetCatalog(ctx, account)
}

// SetCatalog stores the account's catalog settings. Making a catalog strict checks
// the endpoints created or changed after it, not those it has.
func (o *Outbox) SetCatalog(ctx context.Context, c Catalog) (Catalog, error) {
	if c.Account == "" {
		return Catalog{}, invalid("account", "required")
	}
	if err := o.store.SetCatalog(ctx, c); err != nil {
		return Catalog{}, err
	}
	return c, nil
}

func checkDescription(d string) error {
	if len(d) > maxDescriptionLen {
		return invalid("description", "at most %d bytes", maxDescriptionLen)
	}
	return nil
}

// checkSchema compiles raw, and returns it compacted (nil for none).
func checkSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if _, err := schema.Compile(raw); err != nil {
		var se *schema.Error
		if errors.As(err, &se) {
			return nil, invalid("schema"+se.Path, "%s", se.Reason)
		}
		return nil, invalid("schema", "%v", err)
	}
	compact, err := compactJSON(raw)
	if err != nil {
		return nil, invalid("schema", "not valid JSON")
	}
	return compact, nil
}

func normalizedEventType(t EventType) EventType {
	t.CreatedAt = t.CreatedAt.UTC().Truncate(time.Microsecond)
	t.UpdatedAt = t.UpdatedAt.UTC().Truncate(time.Microsecond)
	return t
}

// checkSubscriptions refuses, when the account's catalog is strict, event types an
// endpoint would subscribe to that the catalog does not have (or has archived).
func (o *Outbox) checkSubscriptions(ctx context.Context, account string, events []string) error {
	if len(events) == 0 || len(events) == 1 && events[0] == "*" {
		return nil
	}
	c, err := o.store.GetCatalog(ctx, account)
	if err != nil || !c.Strict {
		return err
	}
	types, err := o.store.ListEventTypes(ctx, outboxdriver.ListEventTypesParams{Account: account, Limit: maxStrictTypes})
	if err != nil {
		return err
	}
	for i, e := range events {
		if e == "*" {
			continue
		}
		if !slices.ContainsFunc(types, func(t EventType) bool { return t.Name == e }) {
			return invalid(fmt.Sprintf("events[%d]", i), "%q is not in the account's event-type catalog, which is strict", e)
		}
	}
	return nil
}

// checkData checks ev's data against its type's schema, if the catalog has one.
func (o *Outbox) checkData(ctx context.Context, ev Event) error {
	s, err := o.catalog.schemaOf(ctx, o.store, ev.Account, ev.Type)
	if err != nil || s == nil {
		return err
	}
	data, err := schema.Decode(ev.Data)
	if err != nil {
		return invalid("data", "not valid JSON")
	}
	if e := s.Validate(data); e != nil {
		return invalid("data"+e.Path, "%s (the schema of event type %s)", e.Reason, ev.Type)
	}
	return nil
}

// schemas caches, per account and type, the compiled schema the catalog holds.
type schemas struct {
	mu sync.Mutex
	m  map[string]cachedSchema
}

type cachedSchema struct {
	at     time.Time
	schema *schema.Schema // nil: no such type, or no schema
}

func schemaKey(account, name string) string { return account + "\x00" + name }

func (c *schemas) forget(account, name string) {
	c.mu.Lock()
	delete(c.m, schemaKey(account, name))
	c.mu.Unlock()
}

// schemaOf returns the compiled schema of the account's type, nil for none, read
// again from the store once catalogTTL has passed.
func (c *schemas) schemaOf(ctx context.Context, st outboxdriver.Store, account, name string) (*schema.Schema, error) {
	key := schemaKey(account, name)
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && time.Since(e.at) < catalogTTL {
		return e.schema, nil
	}
	e = cachedSchema{at: time.Now()}
	t, err := st.GetEventType(ctx, outboxdriver.GetEventTypeParams{Account: account, Name: name})
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return nil, err
	case len(t.Schema) > 0:
		// Stored schemas compiled when written; one this version cannot compile
		// checks nothing rather than refusing every publish of the type.
		e.schema, _ = schema.Compile(t.Schema)
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]cachedSchema{}
	}
	if len(c.m) > 10000 {
		clear(c.m) // bounded: a cache, not a copy of every catalog
	}
	c.m[key] = e
	c.mu.Unlock()
	return e.schema, nil
}
