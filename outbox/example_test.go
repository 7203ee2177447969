package outbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
)

// A program opens the store and the outbox, registers an endpoint, publishes, and
// reads the delivery back. Here the receiver is on loopback, which the default egress
// rules refuse, so the example allows it explicitly.
func Example() {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	dir, _ := os.MkdirTemp("", "outbox-example-*")
	defer os.RemoveAll(dir)

	ctx := context.Background()
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "outbox.db"), sqlitestore.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	rules := transport.PublicOnly()
	rules.AllowLoopback = true
	finished := make(chan outbox.Delivery, 1)
	ob, err := outbox.Open(ctx, outbox.Config{Store: store, Egress: &rules,
		// Observe sees each attempt once it is recorded; it must not block.
		Observe: func(d outbox.Delivery, _ outbox.Attempt) {
			if d.Status.Finished() {
				select {
				case finished <- d:
				default:
				}
			}
		}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := ob.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer ob.Close(ctx)

	ep, _ := ob.CreateEndpoint(ctx, outbox.EndpointSpec{
		Account: "acme", URL: receiver.URL + "/webhooks", Events: []string{"call.status"},
		Profile:   outbox.ProfileStandard,
		Overrides: outbox.Overrides{AllowHTTP: ptr(true)}, // the example's receiver is plain http
	})
	pub, _ := ob.Publish(ctx, outbox.Event{Account: "acme", Type: "call.status",
		Data: json.RawMessage(`{"callSid":"CA1","status":"completed"}`)})

	select {
	case <-finished:
		d, attempts, _ := ob.GetDelivery(ctx, "acme", pub.Deliveries[0].ID)
		fmt.Println(d.Status, len(attempts), attempts[0].Status, d.EndpointID == ep.ID)
	case <-time.After(10 * time.Second):
		fmt.Println("not delivered")
	}
	// Output: SUCCEEDED 1 204 true
}
