package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

const eventTypeColumns = `account, name, description, schema, archived_at, created_at, updated_at`

func scanEventType(r sqlrows.Row) (outboxdriver.EventType, error) {
	var (
		t      outboxdriver.EventType
		schema string
	)
	if err := r.Scan(&t.Account, &t.Name, &t.Description, &schema, &t.ArchivedAt, &t.CreatedAt, &t.UpdatedAt); err != nil {
		return t, err
	}
	if schema != "" {
		t.Schema = json.RawMessage(schema)
	}
	t.ArchivedAt, t.CreatedAt, t.UpdatedAt = utcPtr(t.ArchivedAt), utc(t.CreatedAt), utc(t.UpdatedAt)
	return t, nil
}

// CreateEventType implements outboxdriver.Store.
func (s *Store) CreateEventType(ctx context.Context, t outboxdriver.EventType) error {
	return s.write(ctx, func(q querier) error {
		n, err := q.exec(ctx, s.q(`INSERT INTO outbox_event_types (`+eventTypeColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (account, name) DO NOTHING`), t.Account, t.Name, t.Description, string(t.Schema),
			t.ArchivedAt, t.CreatedAt, t.UpdatedAt)
		if err != nil {
			return fmt.Errorf("pgstore: insert event type: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("%w: event type %s exists", outboxdriver.ErrConflict, t.Name)
		}
		return nil
	})
}

// GetEventType implements outboxdriver.Store.
func (s *Store) GetEventType(ctx context.Context, p outboxdriver.GetEventTypeParams) (outboxdriver.EventType, error) {
	return s.getEventType(ctx, s.read(), p.Account, p.Name, "")
}

func (s *Store) getEventType(ctx context.Context, q querier, account, name, lock string) (outboxdriver.EventType, error) {
	return one(q.queryRow(ctx, s.q(`SELECT `+eventTypeColumns+` FROM outbox_event_types WHERE account = $1 AND name = $2 `+lock),
		account, name), scanEventType, "event type", name)
}

// ListEventTypes implements outboxdriver.Store.
func (s *Store) ListEventTypes(ctx context.Context, p outboxdriver.ListEventTypesParams) ([]outboxdriver.EventType, error) {
	query := `SELECT ` + eventTypeColumns + ` FROM outbox_event_types WHERE account = $1 AND name COLLATE "C" > $2`
	if !p.IncludeArchived {
		query += ` AND archived_at IS NULL`
	}
	rs, err := s.read().query(ctx, s.q(query+` ORDER BY name COLLATE "C" LIMIT $3`), p.Account, p.AfterName, p.Limit)
	return sqlrows.Collect(nil, rs, err, scanEventType)
}

// UpdateEventType implements outboxdriver.Store.
func (s *Store) UpdateEventType(ctx context.Context, p outboxdriver.UpdateEventTypeParams) (outboxdriver.EventType, error) {
	var out outboxdriver.EventType
	err := s.write(ctx, func(q querier) error {
		cur, err := s.getEventType(ctx, q, p.Account, p.Name, "FOR UPDATE")
		if err != nil {
			return err
		}
		t, err := p.Change(cur)
		if err != nil {
			return err
		}
		if _, err := q.exec(ctx, s.q(`UPDATE outbox_event_types SET description = $3, schema = $4, archived_at = $5, updated_at = $6
			WHERE account = $1 AND name = $2`), p.Account, p.Name, t.Description, string(t.Schema), t.ArchivedAt, t.UpdatedAt); err != nil {
			return fmt.Errorf("pgstore: update event type: %w", err)
		}
		out, err = s.getEventType(ctx, q, p.Account, p.Name, "")
		return err
	})
	if err != nil {
		return outboxdriver.EventType{}, err
	}
	return out, nil
}

// GetCatalog implements outboxdriver.Store.
func (s *Store) GetCatalog(ctx context.Context, account string) (outboxdriver.Catalog, error) {
	c := outboxdriver.Catalog{Account: account}
	err := s.read().queryRow(ctx, s.q(`SELECT strict FROM outbox_catalogs WHERE account = $1`), account).Scan(&c.Strict)
	if isNoRows(err) {
		return c, nil
	}
	return c, err
}

// SetCatalog implements outboxdriver.Store.
func (s *Store) SetCatalog(ctx context.Context, c outboxdriver.Catalog) error {
	return s.write(ctx, func(q querier) error {
		_, err := q.exec(ctx, s.q(`INSERT INTO outbox_catalogs (account, strict) VALUES ($1, $2)
			ON CONFLICT (account) DO UPDATE SET strict = excluded.strict`), c.Account, c.Strict)
		return err
	})
}
