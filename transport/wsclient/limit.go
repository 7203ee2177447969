package wsclient

import (
	"fmt"
	"io"

	"github.com/coder/websocket"
)

// readLimited reads one message of type typ from r. A text message of at most limit
// bytes is returned whole. A binary message, or a text message over limit, is read to
// its end and discarded (so the connection stays usable) and reported with
// ErrBinaryFrame or ErrMessageTooLarge; only limit+1 bytes are ever held in memory.
// fatal is set when r itself failed: the connection cannot go on.
func readLimited(typ websocket.MessageType, r io.Reader, limit int) (data []byte, fatal bool, err error) {
	if typ != websocket.MessageText {
		n, err := io.Copy(io.Discard, r)
		if err != nil {
			return nil, true, err
		}
		return nil, false, fmt.Errorf("%w: %d bytes", ErrBinaryFrame, n)
	}
	data, err = io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, true, err
	}
	if len(data) <= limit {
		return data, false, nil
	}
	rest, err := io.Copy(io.Discard, r)
	if err != nil {
		return nil, true, err
	}
	return nil, false, fmt.Errorf("%w: %d bytes (limit %d)", ErrMessageTooLarge, int64(len(data))+rest, limit)
}
