package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

const eventTypeColumns = `account, name, description, schema, archived_at, created_at, updated_at`

func scanEventType(r sqlrows.Row) (outboxdriver.EventType, error) {
	var (
		t                outboxdriver.EventType
		schema           string
		archived         sql.NullInt64
		created, updated int64
	)
	if err := r.Scan(&t.Account, &t.Name, &t.Description, &schema, &archived, &created, &updated); err != nil {
		return t, err
	}
	if schema != "" {
		t.Schema = json.RawMessage(schema)
	}
	t.ArchivedAt, t.CreatedAt, t.UpdatedAt = fromNull(archived), fromMicros(created), fromMicros(updated)
	return t, nil
}

// CreateEventType implements outboxdriver.Store.
func (s *Store) CreateEventType(ctx context.Context, t outboxdriver.EventType) error {
	return s.write(ctx, func(tx querier) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO outbox_event_types (`+eventTypeColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (account, name) DO NOTHING`, t.Account, t.Name, t.Description, string(t.Schema),
			microsPtr(t.ArchivedAt), micros(t.CreatedAt), micros(t.UpdatedAt))
		if err != nil {
			return fmt.Errorf("sqlitestore: insert event type: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("%w: event type %s exists", outboxdriver.ErrConflict, t.Name)
		}
		return nil
	})
}

// GetEventType implements outboxdriver.Store.
func (s *Store) GetEventType(ctx context.Context, p outboxdriver.GetEventTypeParams) (outboxdriver.EventType, error) {
	return getEventType(ctx, s.read(), p.Account, p.Name)
}

func getEventType(ctx context.Context, q querier, account, name string) (outboxdriver.EventType, error) {
	return one(q.QueryRowContext(ctx, `SELECT `+eventTypeColumns+` FROM outbox_event_types WHERE account = ? AND name = ?`,
		account, name), scanEventType, "event type", name)
}

// ListEventTypes implements outboxdriver.Store.
func (s *Store) ListEventTypes(ctx context.Context, p outboxdriver.ListEventTypesParams) ([]outboxdriver.EventType, error) {
	query := `SELECT ` + eventTypeColumns + ` FROM outbox_event_types WHERE account = ? AND name > ?`
	if !p.IncludeArchived {
		query += ` AND archived_at IS NULL`
	}
	rows, err := s.read().QueryContext(ctx, query+` ORDER BY name LIMIT ?`, p.Account, p.AfterName, p.Limit)
	return sqlrows.Collect(nil, rows, err, scanEventType)
}

// UpdateEventType implements outboxdriver.Store.
func (s *Store) UpdateEventType(ctx context.Context, p outboxdriver.UpdateEventTypeParams) (outboxdriver.EventType, error) {
	var out outboxdriver.EventType
	err := s.write(ctx, func(tx querier) error {
		cur, err := getEventType(ctx, tx, p.Account, p.Name)
		if err != nil {
			return err
		}
		t, err := p.Change(cur)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE outbox_event_types SET description = ?, schema = ?, archived_at = ?, updated_at = ?
			WHERE account = ? AND name = ?`, t.Description, string(t.Schema), microsPtr(t.ArchivedAt), micros(t.UpdatedAt),
			p.Account, p.Name); err != nil {
			return fmt.Errorf("sqlitestore: update event type: %w", err)
		}
		out, err = getEventType(ctx, tx, p.Account, p.Name)
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
	err := s.read().QueryRowContext(ctx, `SELECT strict FROM outbox_catalogs WHERE account = ?`, account).Scan(&c.Strict)
	if isNoRows(err) {
		return c, nil
	}
	return c, err
}

// SetCatalog implements outboxdriver.Store.
func (s *Store) SetCatalog(ctx context.Context, c outboxdriver.Catalog) error {
	return s.write(ctx, func(tx querier) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO outbox_catalogs (account, strict) VALUES (?, ?)
			ON CONFLICT (account) DO UPDATE SET strict = excluded.strict`, c.Account, c.Strict)
		return err
	})
}
