package smtptest

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
)

// Message is one message the sink accepted.
type Message struct {
	From string
	To   []string
	// Data is the message as sent after DATA, dot-unstuffed, lines ending CRLF.
	Data string
}

// Sink is a minimal SMTP server on 127.0.0.1 (RFC 5321: EHLO/HELO, MAIL, RCPT, DATA,
// RSET, NOOP, QUIT; no extensions).
type Sink struct {
	// Addr is "127.0.0.1:port".
	Addr     string
	ln       net.Listener
	mu       sync.Mutex
	messages []Message
	arrived  chan struct{}
	wg       sync.WaitGroup
}

// NewSink starts a Sink, closed by t.Cleanup.
func NewSink(t testing.TB) *Sink {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s := &Sink{Addr: ln.Addr().String(), ln: ln, arrived: make(chan struct{}, 1)}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.Close)
	return s
}

// URL is the sink's smtp:// URL.
func (s *Sink) URL() string { return "smtp://" + s.Addr }

// Messages returns what the sink accepted so far.
func (s *Sink) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Arrived is notified (without blocking the sink) after each accepted message.
func (s *Sink) Arrived() <-chan struct{} { return s.arrived }

// Close stops the sink and waits for its connections to end.
func (s *Sink) Close() {
	_ = s.ln.Close()
	s.wg.Wait()
}

func (s *Sink) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.session(c)
		}()
	}
}

func (s *Sink) session(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	reply := func(line string) bool {
		_, err := c.Write([]byte(line + "\r\n"))
		return err == nil
	}
	if !reply("220 smtptest ready") {
		return
	}
	var msg Message
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb := strings.ToUpper(line)
		switch {
		case strings.HasPrefix(verb, "EHLO"), strings.HasPrefix(verb, "HELO"):
			reply("250 smtptest")
		case strings.HasPrefix(verb, "MAIL FROM:"):
			msg = Message{From: strings.Trim(line[len("MAIL FROM:"):], " <>")}
			reply("250 ok")
		case strings.HasPrefix(verb, "RCPT TO:"):
			msg.To = append(msg.To, strings.Trim(line[len("RCPT TO:"):], " <>"))
			reply("250 ok")
		case verb == "DATA":
			reply("354 end with <CRLF>.<CRLF>")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(strings.TrimPrefix(l, "."))
			}
			msg.Data = data.String()
			s.mu.Lock()
			s.messages = append(s.messages, msg)
			s.mu.Unlock()
			select {
			case s.arrived <- struct{}{}:
			default:
			}
			reply("250 queued")
		case verb == "RSET", verb == "NOOP":
			reply("250 ok")
		case verb == "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 not implemented")
		}
	}
}
