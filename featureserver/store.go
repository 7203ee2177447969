package featureserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // the embedded default database
)

// ErrNotFound is returned when a record does not exist or belongs to another account:
// the two are indistinguishable to a caller, so accounts cannot probe each other.
var ErrNotFound = errors.New("not found")

//go:embed migrations/*.sql
var migrations embed.FS

// Store keeps a node's accounts, applications, alerts and finished calls.
type Store struct {
	db  *sql.DB
	now func() time.Time
}

// OpenStore opens (creating if needed) the node database at loc and migrates it.
func OpenStore(ctx context.Context, loc DatabaseLocation) (*Store, error) {
	dsn := "file:" + loc.Path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", loc.Path, err)
	}
	s := &Store{db: db, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s: %w", loc.Path, err)
	}
	return s, nil
}

// migrate applies, in name order, the embedded migrations not applied yet, each in a
// transaction with its record in fs_schema_migrations. Migrations are append-only:
// a released one is never edited.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS fs_schema_migrations (
		name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		if err := s.applyMigration(ctx, f); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, name string) error {
	script, err := migrations.ReadFile(name)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var applied int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM fs_schema_migrations WHERE name = ?`, name).Scan(&applied); err != nil {
		return err
	}
	if applied > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, string(script)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO fs_schema_migrations(name, applied_at) VALUES (?, ?)`, name, s.now().UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Account is a tenant of the node.
type Account struct {
	Sid           string    `json:"account_sid"`
	Name          string    `json:"name"`
	WebhookSecret string    `json:"-"`
	CreatedAt     time.Time `json:"created_at"`
}

// HookSpec is a stored hook: URL (fragment allowed), method and Basic credentials.
type HookSpec struct {
	URL      string `json:"url"`
	Method   string `json:"method,omitempty" enum:"GET,POST" doc:"POST (default) or GET"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// Application binds a call hook and a status hook to an account.
type Application struct {
	Sid            string    `json:"application_sid"`
	AccountSid     string    `json:"account_sid"`
	Name           string    `json:"name"`
	CallHook       HookSpec  `json:"call_hook"`
	CallStatusHook *HookSpec `json:"call_status_hook,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
}

// Alert is something an account's operator should know about a call.
type Alert struct {
	Type       string    `json:"type"`
	CallSid    string    `json:"call_sid"`
	URL        string    `json:"url"`
	Detail     string    `json:"detail"`
	Time       time.Time `json:"time"`
	AccountSid string    `json:"-"`
}

func newSid() string { return uuid.NewString() }

// newSecret returns a random token of n bytes, URL-safe base64.
func newSecret(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateAccount creates an account with a fresh webhook secret and API token. The token
// is returned only here: the store keeps its hash.
func (s *Store) CreateAccount(ctx context.Context, name string) (Account, string, error) {
	a := Account{Sid: newSid(), Name: name, WebhookSecret: newSecret(24), CreatedAt: s.now().UTC().Truncate(time.Millisecond)}
	token := newSecret(32)
	return a, token, s.insertAccount(ctx, a, token, tokenFromAPI)
}

// Where an API token came from.
const (
	tokenFromAPI       = "api"
	tokenFromBootstrap = "bootstrap"
)

// InsertAccount stores an account with a known sid, secret and token (bootstrap files).
// An existing account of the same sid is updated, and the token replaces the one an
// earlier bootstrap installed (tokens created through the API stay).
func (s *Store) InsertAccount(ctx context.Context, a Account, token string) error {
	if a.CreatedAt.IsZero() {
		a.CreatedAt = s.now().UTC().Truncate(time.Millisecond)
	}
	return s.insertAccount(ctx, a, token, tokenFromBootstrap)
}

func (s *Store) insertAccount(ctx context.Context, a Account, token, origin string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO fs_accounts(sid, name, webhook_secret, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(sid) DO UPDATE SET name = excluded.name, webhook_secret = excluded.webhook_secret`,
		a.Sid, a.Name, a.WebhookSecret, a.CreatedAt.UnixMilli()); err != nil {
		return err
	}
	if token != "" {
		if origin == tokenFromBootstrap {
			if _, err := tx.ExecContext(ctx, `DELETE FROM fs_api_tokens WHERE account_sid = ? AND origin = ? AND token_hash <> ?`,
				a.Sid, tokenFromBootstrap, hashToken(token)); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO fs_api_tokens(token_hash, account_sid, created_at, origin) VALUES (?, ?, ?, ?)
			ON CONFLICT(token_hash) DO UPDATE SET account_sid = excluded.account_sid, origin = excluded.origin`,
			hashToken(token), a.Sid, a.CreatedAt.UnixMilli(), origin); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// AccountByToken returns the account an API token belongs to.
func (s *Store) AccountByToken(ctx context.Context, token string) (Account, error) {
	return s.scanAccount(s.db.QueryRowContext(ctx, `SELECT a.sid, a.name, a.webhook_secret, a.created_at
		FROM fs_api_tokens t JOIN fs_accounts a ON a.sid = t.account_sid WHERE t.token_hash = ?`, hashToken(token)))
}

// Account returns one account.
func (s *Store) Account(ctx context.Context, sid string) (Account, error) {
	return s.scanAccount(s.db.QueryRowContext(ctx, `SELECT sid, name, webhook_secret, created_at FROM fs_accounts WHERE sid = ?`, sid))
}

func (s *Store) scanAccount(row *sql.Row) (Account, error) {
	var a Account
	var created int64
	if err := row.Scan(&a.Sid, &a.Name, &a.WebhookSecret, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Account{}, ErrNotFound
		}
		return Account{}, err
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	return a, nil
}

// SaveApplication inserts or replaces an application.
func (s *Store) SaveApplication(ctx context.Context, app Application) error {
	callHook, _ := json.Marshal(app.CallHook)
	statusHook, _ := json.Marshal(app.CallStatusHook)
	_, err := s.db.ExecContext(ctx, `INSERT INTO fs_applications(sid, account_sid, name, call_hook, call_status_hook, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(sid) DO UPDATE SET name = excluded.name, call_hook = excluded.call_hook,
		call_status_hook = excluded.call_status_hook WHERE fs_applications.account_sid = excluded.account_sid`,
		app.Sid, app.AccountSid, app.Name, string(callHook), string(statusHook), app.CreatedAt.UnixMilli())
	return err
}

// Application returns an application of the account.
func (s *Store) Application(ctx context.Context, accountSid, sid string) (Application, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT sid, account_sid, name, call_hook, call_status_hook, created_at
		FROM fs_applications WHERE account_sid = ? AND sid = ?`, accountSid, sid)
	if err != nil {
		return Application{}, err
	}
	apps, err := scanApplications(rows)
	if err != nil {
		return Application{}, err
	}
	if len(apps) == 0 {
		return Application{}, ErrNotFound
	}
	return apps[0], nil
}

// Applications lists the account's applications, oldest first.
func (s *Store) Applications(ctx context.Context, accountSid string) ([]Application, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT sid, account_sid, name, call_hook, call_status_hook, created_at
		FROM fs_applications WHERE account_sid = ? ORDER BY created_at, sid`, accountSid)
	if err != nil {
		return nil, err
	}
	return scanApplications(rows)
}

// DeleteApplication removes an application of the account.
func (s *Store) DeleteApplication(ctx context.Context, accountSid, sid string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM fs_applications WHERE account_sid = ? AND sid = ?`, accountSid, sid)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func scanApplications(rows *sql.Rows) ([]Application, error) {
	defer rows.Close()
	var apps []Application
	for rows.Next() {
		var a Application
		var callHook, statusHook string
		var created int64
		if err := rows.Scan(&a.Sid, &a.AccountSid, &a.Name, &callHook, &statusHook, &created); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(callHook), &a.CallHook); err != nil {
			return nil, fmt.Errorf("application %s: call hook: %w", a.Sid, err)
		}
		if err := json.Unmarshal([]byte(statusHook), &a.CallStatusHook); err != nil {
			return nil, fmt.Errorf("application %s: status hook: %w", a.Sid, err)
		}
		a.CreatedAt = time.UnixMilli(created).UTC()
		apps = append(apps, a)
	}
	return apps, rows.Err()
}

// AddAlert records an alert.
func (s *Store) AddAlert(ctx context.Context, a Alert) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO fs_alerts(account_sid, type, call_sid, url, detail, at_ms) VALUES (?, ?, ?, ?, ?, ?)`,
		a.AccountSid, a.Type, a.CallSid, a.URL, a.Detail, a.Time.UnixMilli())
	return err
}

// Alerts lists the account's alerts at or after since, of type alertType when not
// empty, oldest first, at most limit.
func (s *Store) Alerts(ctx context.Context, accountSid, alertType string, since time.Time, limit int) ([]Alert, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT type, call_sid, url, detail, at_ms FROM fs_alerts
		WHERE account_sid = ? AND (? = '' OR type = ?) AND at_ms >= ? ORDER BY at_ms, id LIMIT ?`,
		accountSid, alertType, alertType, since.UnixMilli(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	alerts := []Alert{}
	for rows.Next() {
		a := Alert{AccountSid: accountSid}
		var at int64
		if err := rows.Scan(&a.Type, &a.CallSid, &a.URL, &a.Detail, &at); err != nil {
			return nil, err
		}
		a.Time = time.UnixMilli(at).UTC()
		alerts = append(alerts, a)
	}
	return alerts, rows.Err()
}

// SaveCall stores a call's record (state and timeline) as JSON; active says whether
// the call is still in progress (see InterruptActiveCalls).
func (s *Store) SaveCall(ctx context.Context, accountSid, applicationSid, callSid string, createdAt time.Time, active bool, record any) error {
	b, err := json.Marshal(record)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO fs_calls(sid, account_sid, application_sid, record, active, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT(sid) DO UPDATE SET record = excluded.record, active = excluded.active`,
		callSid, accountSid, applicationSid, string(b), active, createdAt.UnixMilli())
	return err
}

// InterruptActiveCalls marks the calls a previous run of the node left active (it
// crashed or was killed) as ended, through end, which rewrites a record. It returns
// how many there were.
func (s *Store) InterruptActiveCalls(ctx context.Context, end func(json.RawMessage) (any, error)) (int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT sid, record FROM fs_calls WHERE active = 1`)
	if err != nil {
		return 0, err
	}
	type pending struct {
		sid    string
		record json.RawMessage
	}
	var calls []pending
	for rows.Next() {
		var p pending
		var rec string
		if err := rows.Scan(&p.sid, &rec); err != nil {
			rows.Close()
			return 0, err
		}
		p.record = json.RawMessage(rec)
		calls = append(calls, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, p := range calls {
		updated, err := end(p.record)
		if err != nil {
			return 0, fmt.Errorf("call %s: %w", p.sid, err)
		}
		b, err := json.Marshal(updated)
		if err != nil {
			return 0, err
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE fs_calls SET record = ?, active = 0 WHERE sid = ?`, string(b), p.sid); err != nil {
			return 0, err
		}
	}
	return len(calls), nil
}

// CallRecord returns a stored call's JSON record.
func (s *Store) CallRecord(ctx context.Context, accountSid, callSid string) (json.RawMessage, error) {
	var rec string
	err := s.db.QueryRowContext(ctx, `SELECT record FROM fs_calls WHERE account_sid = ? AND sid = ?`, accountSid, callSid).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return json.RawMessage(rec), err
}

// CallRecords lists the account's stored calls, newest first, at most limit.
func (s *Store) CallRecords(ctx context.Context, accountSid string, limit int) ([]json.RawMessage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT record FROM fs_calls WHERE account_sid = ? ORDER BY created_at_ms DESC, sid LIMIT ?`, accountSid, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []json.RawMessage
	for rows.Next() {
		var rec string
		if err := rows.Scan(&rec); err != nil {
			return nil, err
		}
		out = append(out, json.RawMessage(rec))
	}
	return out, rows.Err()
}

// SaveStatusHook records how an account's status hook at url (its query included) is
// configured, replacing what was recorded.
func (s *Store) SaveStatusHook(ctx context.Context, accountSid, url string, hook HookSpec) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO fs_status_hooks(account_sid, url, method, username, password, updated_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(account_sid, url) DO UPDATE SET method = excluded.method,
		username = excluded.username, password = excluded.password, updated_at = excluded.updated_at`,
		accountSid, url, hook.Method, hook.Username, hook.Password, s.now().UnixMilli())
	return err
}

// StatusHook returns what SaveStatusHook recorded, or ErrNotFound.
func (s *Store) StatusHook(ctx context.Context, accountSid, url string) (HookSpec, error) {
	h := HookSpec{URL: url}
	err := s.db.QueryRowContext(ctx, `SELECT method, username, password FROM fs_status_hooks
		WHERE account_sid = ? AND url = ?`, accountSid, url).Scan(&h.Method, &h.Username, &h.Password)
	if errors.Is(err, sql.ErrNoRows) {
		return HookSpec{}, ErrNotFound
	}
	return h, err
}
