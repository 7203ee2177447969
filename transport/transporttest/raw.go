package transporttest

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"testing"
)

// Raw is a TCP server that reads each request's head and writes back fixed bytes,
// then closes: for answers that are not valid HTTP.
type Raw struct {
	// Addr is "127.0.0.1:port".
	Addr  string
	reply []byte
	ln    net.Listener
	wg    sync.WaitGroup
}

// NewRaw starts a Raw server answering reply to every request; closed by t.Cleanup.
func NewRaw(t testing.TB, reply []byte) *Raw {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("transporttest: listen: %v", err)
	}
	r := &Raw{Addr: ln.Addr().String(), reply: reply, ln: ln}
	r.wg.Add(1)
	go r.serve()
	t.Cleanup(r.Close)
	return r
}

func (r *Raw) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer c.Close()
			if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
				return
			}
			_, _ = c.Write(r.reply)
		}()
	}
}

// Close stops the server and waits for its connections to finish.
func (r *Raw) Close() {
	_ = r.ln.Close()
	r.wg.Wait()
}
