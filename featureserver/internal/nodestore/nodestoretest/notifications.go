package nodestoretest

import (
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// testNotifications: an account without notice settings reads as the empty setting
// (no webhook, no e-mails: an empty list); a save reads back and a later one
// replaces it; another account's stay its own.
func testNotifications(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "a", "b")
	empty := nodestore.Notifications{Emails: []string{}}
	if got, err := s.GetNotifications(ctx, "a"); err != nil || !reflect.DeepEqual(got, empty) {
		t.Fatalf("unset: %#v, %v; want %#v", got, err, empty)
	}
	save := func(account string, n nodestore.Notifications, at time.Time) {
		t.Helper()
		if err := s.SaveNotifications(ctx, nodestore.SaveNotificationsParams{AccountSid: account, Notifications: n, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	first := nodestore.Notifications{WebhookURL: "https://ops.example.com/notices", Emails: []string{"ops@example.com", "oncall@example.com"}}
	save("a", first, t0)
	save("b", nodestore.Notifications{Emails: []string{"b@example.com"}}, t0)
	if got, err := s.GetNotifications(ctx, "a"); err != nil || !reflect.DeepEqual(got, first) {
		t.Fatalf("saved: %#v, %v; want %#v", got, err, first)
	}
	save("a", nodestore.Notifications{Emails: []string{}}, t0.Add(time.Hour))
	if got, err := s.GetNotifications(ctx, "a"); err != nil || !reflect.DeepEqual(got, empty) {
		t.Fatalf("after a later save: %#v, %v; want %#v", got, err, empty)
	}
	if got, err := s.GetNotifications(ctx, "b"); err != nil || !reflect.DeepEqual(got.Emails, []string{"b@example.com"}) {
		t.Fatalf("account b's: %#v, %v", got, err)
	}
}
