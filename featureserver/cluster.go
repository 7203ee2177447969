package featureserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
)

// The settings of nodes sharing one PostgreSQL database (docs/outbox.md §5).
const (
	// EnvNodeID names the node in the records of its calls and its lease.
	EnvNodeID = "SWITCHBOARD_NODE_ID"
	// EnvNodeURL is where other nodes reach this node's API.
	EnvNodeURL = "SWITCHBOARD_NODE_URL"
	// EnvNodeLease is how long a node's lease on its calls lasts unrenewed.
	EnvNodeLease = "SWITCHBOARD_NODE_LEASE_MS"
)

var envNodeLease = intSetting{EnvNodeLease, 1000, 600_000, "milliseconds"}

// nodeID is what a node id may be: it is written into records and logs.
var nodeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// ClusterSettings are a node's settings among the nodes that share its PostgreSQL
// database. On SQLite, where one node owns the file, only NodeID is used (it names
// the node in its calls' records).
type ClusterSettings struct {
	// NodeID names the node. Give each node its own, stable across restarts: a
	// node restarted with its id records the calls its previous run left active as
	// ended at once (node-restart); a new id leaves them to the lease's expiry
	// (node-lost). Default: the host name and the process id (a container
	// restarted keeps both, and so its id).
	NodeID string
	// NodeURL is where the other nodes reach this node's API, to forward live
	// control of the calls it runs: http(s)://host:port. Default: http:// and the
	// address the node listens on (the host name for an unspecified address).
	NodeURL string
	// Lease is how long the node's lease on its calls lasts unrenewed; it renews it
	// every third of that. Once it expired (the node died, or lost the database),
	// another node records the node's calls as ended (node-lost:<id>). Default 15 s.
	Lease time.Duration
}

// loadClusterSettings reads the cluster settings; bad values are *ConfigError.
func loadClusterSettings(get func(string) string) (ClusterSettings, error) {
	var (
		s    ClusterSettings
		errs []error
		err  error
	)
	s.NodeID, s.NodeURL = get(EnvNodeID), get(EnvNodeURL)
	s.Lease, err = envNodeLease.duration(get(EnvNodeLease))
	errs = append(errs, err, s.validate(EnvNodeID, EnvNodeURL))
	return s, errors.Join(errs...)
}

// WithDefaults returns s with a zero Lease and NodeID replaced by their defaults
// (NodeURL's needs the bound address: Run sets it).
func (s ClusterSettings) WithDefaults() ClusterSettings {
	setDefault(&s.Lease, 15*time.Second)
	if s.NodeID == "" {
		host, err := os.Hostname()
		if err != nil || !nodeID.MatchString(host) {
			host = "node"
		}
		s.NodeID = host + "-" + strconv.Itoa(os.Getpid())
	}
	return s
}

// validate reports every bad value, naming idName and urlName.
func (s ClusterSettings) validate(idName, urlName string) error {
	var errs []error
	if s.NodeID != "" && !nodeID.MatchString(s.NodeID) {
		errs = append(errs, &ConfigError{Name: idName, Value: s.NodeID, Accept: "1 to 128 letters, digits and . _ : - (starting with a letter or digit)"})
	}
	if s.NodeURL != "" {
		u, err := url.Parse(s.NodeURL)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			errs = append(errs, &ConfigError{Name: urlName, Value: s.NodeURL, Accept: "http(s)://host:port[/path], without credentials, query or fragment"})
		}
	}
	if s.Lease != 0 {
		errs = append(errs, envNodeLease.checkDuration("Config.Cluster.Lease", s.Lease))
	}
	return errors.Join(errs...)
}

// advertisedURL is NodeURL, or the URL of the bound address addr.
func (s ClusterSettings) advertisedURL(addr net.Addr) string {
	if s.NodeURL != "" {
		return s.NodeURL
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			host = name
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// holdLease keeps the node's lease on its calls while ctx lasts, renewing it every
// third of the lease, and records as ended the calls of nodes whose lease expired
// (docs/outbox.md §5). A renewal or a sweep that fails (the database is away) is
// logged and tried at the next tick; the node's own calls are safe while the lease
// lasts. It returns when ctx ends, once a renewal in flight has finished.
func (n *Node) holdLease(ctx context.Context, url string) {
	lease := n.cfg.Cluster.Lease
	tick := time.NewTicker(lease / 3)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if ctx.Err() != nil {
			return // a tick and the end came together: select may pick either
		}
		err := n.renewAndSweep(ctx, url)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			n.log.Warn().Err(err).Msg("renewing the node's lease on its calls failed: retrying")
			failing = true
		case err == nil && failing:
			n.log.Info().Msg("the node's lease on its calls is renewed again")
			failing = false
		}
	}
}

// renewAndSweep renews the lease, then ends the calls of lost nodes.
func (n *Node) renewAndSweep(ctx context.Context, url string) error {
	// The end of ctx (the node stopping) cuts neither short: a renewal abandoned
	// mid-flight can still commit on the database after the stop's give-up and hold
	// the lease for one more term. Stopping waits for both instead. The renewal has a
	// third of the lease, so that a late one is abandoned while the lease it may
	// extend is still the one the stop gives up; the sweep extends no lease and has a
	// whole term of its own: on a loaded machine a third of the least lease (333 ms)
	// is too short for its reads and transaction, and a sweep that always times out
	// never ends a lost node's calls.
	renewCtx, cancelRenew := context.WithTimeout(context.WithoutCancel(ctx), n.cfg.Cluster.Lease/3)
	defer cancelRenew()
	if err := n.calls.LeaseNode(renewCtx, url, n.cfg.Cluster.Lease); err != nil {
		return fmt.Errorf("lease: %w", err)
	}
	sweepCtx, cancelSweep := context.WithTimeout(context.WithoutCancel(ctx), n.cfg.Cluster.Lease)
	defer cancelSweep()
	ended, err := n.calls.RecoverLost(sweepCtx, false)
	if err != nil {
		return fmt.Errorf("ending the calls of lost nodes: %w", err)
	}
	if ended > 0 {
		n.log.Warn().Int("calls", ended).Msg("calls of nodes whose lease expired recorded as ended (" + calls.ReasonNodeLost + ")")
	}
	return nil
}

// recoverCalls records as ended, at start, the calls a previous run of the node left
// active (node-restart). On a database that several nodes share, those are the calls
// of this node's id, and the calls of nodes whose lease expired (node-lost) go with
// them; a call of a live node is its own.
func (n *Node) recoverCalls(ctx context.Context) error {
	var (
		ended int
		err   error
	)
	if n.db.shared() {
		ended, err = n.calls.RecoverLost(ctx, true)
	} else {
		ended, err = n.calls.RecoverInterrupted(ctx)
	}
	if err != nil {
		return fmt.Errorf("recording calls interrupted by the previous run: %w", err)
	}
	if ended > 0 {
		n.log.Warn().Int("calls", ended).Msg("calls left active by a previous run recorded as ended (" + calls.ReasonNodeRestart + ", " + calls.ReasonNodeLost + ")")
	}
	return nil
}

// startLease takes the node's lease on its calls, answering at addr (or NodeURL), and
// keeps renewing it, on a database that several nodes share; stop gives it up (once
// the node's calls ended) and may be called twice. On SQLite there is no one to
// tell: nothing is leased.
func (n *Node) startLease(addr net.Addr) (stop func(), err error) {
	if !n.db.shared() {
		return func() {}, nil
	}
	url := n.cfg.Cluster.advertisedURL(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = n.calls.LeaseNode(ctx, url, n.cfg.Cluster.Lease)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("taking the node's lease on its calls: %w", err)
	}
	leaseCtx, stopRenewing := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.holdLease(leaseCtx, url) }()
	var once sync.Once
	return func() {
		once.Do(func() {
			stopRenewing()
			<-done
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if n.calls.Active() == 0 {
				if err := n.calls.LeaseNode(ctx, url, 0); err != nil {
					n.log.Warn().Err(err).Msg("giving up the node's lease failed: it expires by itself")
				}
			}
		})
	}, nil
}

// reapInterval is how often the outbox looks for expired leases: every quarter of
// the lease, 15 s at most (outbox.Config's default, taken for a zero lease).
func reapInterval(lease time.Duration) time.Duration {
	if lease == 0 {
		return 0
	}
	return min(lease/4, 15*time.Second)
}
