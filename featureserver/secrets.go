package featureserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/dburl"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// SecretsReport is what RotateSecrets did: the output of `switchboard secrets
// rotate --json`, a contract scripts read.
type SecretsReport struct {
	Database string `json:"database"`
	// Keys is how many keys SWITCHBOARD_SECRETS_KEY holds; the first one sealed.
	Keys int `json:"keys"`
	// NodeValues is how many of the node store's secrets were sealed again (webhook
	// secrets, hook passwords); Endpoints how many endpoints' signing keys.
	NodeValues int `json:"node_values"`
	Endpoints  int `json:"endpoints"`
}

// ErrNoSecretsKey is the error of RotateSecrets without a key.
var ErrNoSecretsKey = errors.New("no secrets key: set " + EnvSecretsKey + " with the new key first and the old ones after it")

// resealer is a node store that seals its secrets again (sqlitenode, pgnode).
type resealer interface {
	ResealSecrets(ctx context.Context) (int, error)
}

// RotateSecrets seals every secret of the node's database at databaseURL again
// under the first key of secretsKey (SWITCHBOARD_SECRETS_KEY), opening each with
// any of its keys: the node store's (webhook secrets, hook passwords) and the
// endpoints' signing keys of every account. Secrets stored in clear before a key was
// set are sealed too. Once it returns, the keys after the first are no longer
// needed (docs/security.md §5). On SQLite it takes the node's lock, so no node may
// run on the file meanwhile (ErrDatabaseInUse); on PostgreSQL nodes may run,
// already given the new key first, and lose none of their writes.
func RotateSecrets(ctx context.Context, databaseURL, secretsKey string) (SecretsReport, error) {
	keys, err := parseSecretsKey(EnvSecretsKey, secretsKey)
	if err != nil {
		return SecretsReport{}, err
	}
	if !keys.Enabled() {
		return SecretsReport{}, ErrNoSecretsKey
	}
	loc, err := parseDatabaseURL(databaseURL)
	if err != nil {
		return SecretsReport{}, err
	}
	rep := SecretsReport{Database: dburl.Redact(databaseURL), Keys: keys.Keys()}
	db, err := openDatabase(ctx, loc)
	if err != nil {
		return rep, err
	}
	db.secrets = keys
	ns, err := db.nodeStore(ctx)
	if err != nil {
		return rep, errors.Join(err, db.close())
	}
	st, closeStore, _, err := db.outboxStore(ctx, zerolog.Nop())
	if err != nil {
		return rep, errors.Join(fmt.Errorf("outbox store: %w", err), ns.Close(), db.close())
	}
	rep, err = reseal(ctx, rep, ns, st, keys)
	// On SQLite the node store writes through the outbox store's writer: it closes
	// first; on PostgreSQL the outbox store first, the pool last.
	var closed []error
	if db.shared() {
		closed = append(closed, closeStore(), ns.Close())
	} else {
		closed = append(closed, ns.Close(), closeStore())
	}
	return rep, errors.Join(append([]error{err}, append(closed, db.close())...)...)
}

// reseal seals the node store's secrets again, then the endpoints' keys of each of
// its accounts.
func reseal(ctx context.Context, rep SecretsReport, ns nodestore.Store, st outboxdriver.Store, keys *secretbox.Keyring) (SecretsReport, error) {
	r, ok := ns.(resealer)
	if !ok {
		return rep, fmt.Errorf("the node store %T cannot seal its secrets again", ns)
	}
	var err error
	if rep.NodeValues, err = r.ResealSecrets(ctx); err != nil {
		return rep, fmt.Errorf("the node's secrets: %w", err)
	}
	accounts, err := ns.ListAccounts(ctx)
	if err != nil {
		return rep, err
	}
	sids := make([]string, len(accounts))
	for i, a := range accounts {
		sids[i] = a.Sid
	}
	ob, err := outbox.Open(ctx, outbox.Config{Store: st, Secrets: keys})
	if err != nil {
		return rep, err
	}
	defer ob.Close(context.WithoutCancel(ctx))
	if rep.Endpoints, err = ob.ResealSecrets(ctx, sids); err != nil {
		return rep, fmt.Errorf("the endpoints' keys: %w", err)
	}
	return rep, nil
}
