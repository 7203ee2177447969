package pgtest

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// CutProxy is a TCP proxy on loopback in front of PostgreSQL that a test cuts
// (every connection closed, new ones closed as they arrive) and restores: the
// database lost, as a node sees it.
type CutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

// NewCutProxy starts a CutProxy in front of the database of dbURL and returns it
// with the URL that reaches the database through it. It stops with the test.
func NewCutProxy(t testing.TB, dbURL string) (*CutProxy, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &CutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.SetCut(true)
		p.wg.Wait()
	})
	viaProxy := strings.Replace(dbURL, target, ln.Addr().String(), 1)
	if viaProxy == dbURL {
		t.Fatalf("could not point %s at the proxy", redacted(dbURL))
	}
	return p, viaProxy
}

func (p *CutProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *CutProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// SetCut cuts (closing every connection) or restores the proxy.
func (p *CutProxy) SetCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}
