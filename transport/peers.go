package transport

import (
	"context"
	"net/http/httptrace"
	"net/netip"
	"slices"
	"sync"
)

// Peers records the destinations the requests of one context connected to through
// this package's egress clients: each address dialed (before TLS; through an egress
// proxy, the destination's, not the proxy's) and the address of each connection a
// request was given, pooled ones included. It tells whose answers a program may
// show to whom: a node quotes what an application answered to the account only when
// it came from an address the account could have reached itself (docs/outbox.md
// §6). Safe for concurrent use.
type Peers struct {
	outer *Peers // a Peers of the context TracePeers was given, recording too

	mu      sync.Mutex
	peers   []Peer // distinct, in the order first recorded
	unknown bool   // a request was given a connection another dialer made
}

// Peer is one destination a request connected to: the host of its URL (a name or
// an IP literal) and the address connected.
type Peer struct {
	Host string
	Addr netip.Addr
}

type peersKey struct{}

// TracePeers returns ctx recording, in the returned Peers, the destinations of
// every request made with it or a context derived from it. When ctx records
// already, its Peers records them too.
func TracePeers(ctx context.Context) (context.Context, *Peers) {
	p := &Peers{outer: peersOf(ctx)}
	ctx = context.WithValue(ctx, peersKey{}, p)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if c, ok := dialedOf(info.Conn); ok {
			p.add(Peer{Host: c.host, Addr: c.ip})
		} else {
			p.markUnknown()
		}
	}})
	return ctx, p
}

// peersOf returns the Peers recording ctx's requests, or nil.
func peersOf(ctx context.Context) *Peers {
	p, _ := ctx.Value(peersKey{}).(*Peers)
	return p
}

func (p *Peers) add(peer Peer) {
	for ; p != nil; p = p.outer {
		p.mu.Lock()
		if !slices.Contains(p.peers, peer) {
			p.peers = append(p.peers, peer)
		}
		p.mu.Unlock()
	}
}

func (p *Peers) markUnknown() {
	for ; p != nil; p = p.outer {
		p.mu.Lock()
		p.unknown = true
		p.mu.Unlock()
	}
}

// All reports whether every destination recorded so far satisfies ok (true when
// none was); false, too, once a request was given a connection that this package's
// egress dialer did not make, whose destination it cannot tell.
func (p *Peers) All(ok func(Peer) bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unknown {
		return false
	}
	for _, peer := range p.peers {
		if !ok(peer) {
			return false
		}
	}
	return true
}

// List returns the distinct destinations recorded so far, in the order first
// recorded.
func (p *Peers) List() []Peer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Peer(nil), p.peers...)
}
