package testkit

import (
	"encoding/json"
	"net/http"

	"github.com/coder/websocket"
)

// JambonzWSApp is a WebSocket application on the ws.jambonz.org subprotocol: for
// every message it reads it writes, in order, the messages answer returns for that
// message's type and msgid (none for a message that is not JSON, whose type is
// then ""), until a read or a write fails.
func JambonzWSApp(answer func(msgType, msgID string) []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"ws.jambonz.org"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, data, err := c.Read(r.Context())
			if err != nil {
				return
			}
			var m struct {
				Type  string `json:"type"`
				MsgID string `json:"msgid"`
			}
			if json.Unmarshal(data, &m) != nil {
				m.Type, m.MsgID = "", ""
			}
			for _, msg := range answer(m.Type, m.MsgID) {
				if c.Write(r.Context(), websocket.MessageText, []byte(msg)) != nil {
					return
				}
			}
		}
	})
}
