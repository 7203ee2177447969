package wsclient

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// BenchmarkEcho: one message to an echo server and back, through our Conn (read on
// the caller's goroutine through frameReader, payload limit) beside a bare
// coder/websocket connection as the baseline, in the same run. Compare ns/op of the
// two.
func BenchmarkEcho(b *testing.B) {
	s := newWSServer(b, false, func(ctx context.Context, c *websocket.Conn) {
		for {
			typ, m, err := c.Read(ctx)
			if err != nil || c.Write(ctx, typ, m) != nil {
				return
			}
		}
	})
	url := "ws" + strings.TrimPrefix(s.URL, "http")
	client := loopbackClient(b)
	for _, size := range []int{64, 4096} {
		msg := bytes.Repeat([]byte("x"), size)
		b.Run("baseline-coder/"+itoa(size), func(b *testing.B) {
			ctx := context.Background()
			c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client, Subprotocols: []string{Subprotocol}})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(websocket.StatusNormalClosure, "")
			c.SetReadLimit(DefaultMaxPayload)
			b.SetBytes(int64(size))
			for b.Loop() {
				if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
					b.Fatal(err)
				}
				if _, _, err := c.Read(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("wsclient/"+itoa(size), func(b *testing.B) {
			ctx := context.Background()
			conn, err := Dial(ctx, mustTarget(b, url+"#rc=0"), Options{HTTPClient: client})
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(1000, "")
			b.SetBytes(int64(size))
			for b.Loop() {
				if err := conn.Write(ctx, msg); err != nil {
					b.Fatal(err)
				}
				if _, err := conn.Read(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
