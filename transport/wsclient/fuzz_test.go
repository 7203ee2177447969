package wsclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// chunkReader returns at most chunk bytes per Read, like frames arriving in pieces.
type chunkReader struct {
	data  []byte
	chunk int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.chunk, len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// FuzzReadLimited: whatever the message size, limit and chunking, a text message
// within the limit comes back whole, anything else is reported with the right error,
// and the message is always consumed to its end (the connection stays usable).
func FuzzReadLimited(f *testing.F) {
	f.Add([]byte(`{"type":"ack"}`), uint16(100), uint8(3), false)
	f.Add([]byte(""), uint16(0), uint8(1), false)
	f.Add(bytes.Repeat([]byte("x"), 101), uint16(100), uint8(7), false)
	f.Add(bytes.Repeat([]byte("x"), 100), uint16(100), uint8(0), false)
	f.Add([]byte{0, 1, 2}, uint16(100), uint8(1), true)
	f.Fuzz(func(t *testing.T, msg []byte, limit uint16, chunk uint8, binary bool) {
		r := &chunkReader{data: msg, chunk: int(chunk)%16 + 1}
		typ := websocket.MessageText
		if binary {
			typ = websocket.MessageBinary
		}
		data, fatal, err := readLimited(typ, r, int(limit))
		if fatal {
			t.Fatalf("fatal error from a healthy reader: %v", err)
		}
		if len(r.data) != 0 {
			t.Fatalf("%d bytes of the message left unread", len(r.data))
		}
		switch {
		case binary:
			if !errors.Is(err, ErrBinaryFrame) || data != nil {
				t.Fatalf("binary: data %d bytes, err %v", len(data), err)
			}
		case len(msg) > int(limit):
			if !errors.Is(err, ErrMessageTooLarge) || data != nil {
				t.Fatalf("%d bytes over limit %d: data %d bytes, err %v", len(msg), limit, len(data), err)
			}
		default:
			if err != nil || !bytes.Equal(data, msg) {
				t.Fatalf("%d bytes within limit %d: got %d bytes, err %v", len(msg), limit, len(data), err)
			}
		}
	})
}

func TestReadLimitedBrokenReader(t *testing.T) {
	broken := io.MultiReader(strings.NewReader("partial"), iotestErrReader{})
	for _, typ := range []websocket.MessageType{websocket.MessageText, websocket.MessageBinary} {
		if _, fatal, err := readLimited(typ, broken, 100); !fatal || !errors.Is(err, errBroken) {
			t.Errorf("type %v: err %v fatal %v, want the reader's error as fatal", typ, err, fatal)
		}
	}
	over := io.MultiReader(strings.NewReader(strings.Repeat("x", 200)), iotestErrReader{})
	if _, fatal, err := readLimited(websocket.MessageText, over, 100); !fatal || !errors.Is(err, errBroken) {
		t.Errorf("failing while discarding: err %v fatal %v", err, fatal)
	}
}

var errBroken = errors.New("broken connection")

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errBroken }

// fuzzMaxPayload keeps fuzzed messages around the limit.
const fuzzMaxPayload = 256

// scriptedMessage is one message the raw server sends: decoded from 4 bytes of the
// fuzz input.
type scriptedMessage struct {
	binary, pings bool
	size, frags   int
}

func decodeScript(b []byte) []scriptedMessage {
	var out []scriptedMessage
	for len(b) >= 4 && len(out) < 16 {
		out = append(out, scriptedMessage{
			binary: b[0]&1 != 0,
			pings:  b[0]&2 != 0,
			size:   (int(b[1])<<8 | int(b[2])) % (4 * fuzzMaxPayload),
			frags:  int(b[3])%4 + 1,
		})
		b = b[4:]
	}
	return out
}

func (m scriptedMessage) payload() []byte {
	p := make([]byte, m.size)
	for i := range p {
		p[i] = 'a' + byte(i%26)
	}
	return p
}

// serveScript writes the messages of the script as raw frames: each split in
// fragments, with pings between fragments when asked, then "end" and a close 1000.
func serveScript(r *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
	script, err := base64.StdEncoding.DecodeString(r.Header.Get("X-Script"))
	if err != nil {
		return
	}
	for _, m := range decodeScript(script) {
		p := m.payload()
		op := byte(opText)
		if m.binary {
			op = opBinary
		}
		step := len(p)/m.frags + 1
		for i := 0; i < m.frags; i++ {
			part := p[min(i*step, len(p)):min((i+1)*step, len(p))]
			if writeFrame(rw, i == m.frags-1, op, part) != nil {
				return
			}
			op = opContinuation
			if m.pings && i < m.frags-1 && writeFrame(rw, true, opPing, []byte("p")) != nil {
				return
			}
		}
	}
	writeFrame(rw, true, opText, []byte("end"))
	writeFrame(rw, true, opClose, []byte{0x03, 0xe8})
	// Closing with pongs unread would reset the connection and destroy what the
	// client has not read yet: drain until the client closes its side.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	io.Copy(io.Discard, rw)
}

// FuzzFrames drives a real connection with fuzzed frame sizes and fragmentation:
// every message is delivered or reported exactly as the limit says, the connection
// survives them all, and the final close 1000 is seen as a normal closure.
func FuzzFrames(f *testing.F) {
	f.Add([]byte{0, 0, 10, 0})
	f.Add([]byte{0, 1, 1, 2, 1, 0, 5, 0, 2, 0, 0, 3})            // 257 bytes in 3 fragments (over), binary, pings
	f.Add([]byte{2, 1, 0, 3, 0, 0, 0, 1, 0, 3, 255, 0})          // exactly 256 in 4 with pings, empty in 2, large
	f.Add([]byte{3, 0, 100, 1, 0, 0, 0xff, 3, 0, 0x01, 0x00, 0}) // binary with pings, 255, 256
	s := newRawServer(f, serveScript)
	client := loopbackClient(f)
	f.Fuzz(func(t *testing.T, script []byte) { runScript(t, s.URL, client, script) })
}

func runScript(t *testing.T, serverURL string, client *http.Client, script []byte) {
	{
		opts := Options{HTTPClient: client, HandshakeTimeout: 5 * time.Second, MaxPayload: fuzzMaxPayload,
			Header: http.Header{"X-Script": {base64.StdEncoding.EncodeToString(script)}}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := Dial(ctx, mustTarget(t, "ws"+strings.TrimPrefix(serverURL, "http")+"#rc=0"), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(1000, "")
		for i, m := range decodeScript(script) {
			data, err := conn.Read(ctx)
			switch {
			case m.binary:
				if !errors.Is(err, ErrBinaryFrame) {
					t.Fatalf("message %d (%+v): err %v, want ErrBinaryFrame", i, m, err)
				}
			case m.size > fuzzMaxPayload:
				if !errors.Is(err, ErrMessageTooLarge) || errors.Is(err, ErrDropped) {
					t.Fatalf("message %d (%+v): err %v, want ErrMessageTooLarge", i, m, err)
				}
			default:
				if err != nil || !bytes.Equal(data, m.payload()) {
					t.Fatalf("message %d (%+v): %d bytes, err %v", i, m, len(data), err)
				}
			}
		}
		if data, err := conn.Read(ctx); err != nil || string(data) != "end" {
			t.Fatalf("last message: %q, %v", data, err)
		}
		if _, err := conn.Read(ctx); !errors.Is(err, ErrNormalClosure) {
			t.Fatalf("after the close frame: %v, want ErrNormalClosure", err)
		}
	}
}
