package nodestoretest

import (
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// testAlerts: an account's alerts, oldest first (in the order added within a
// millisecond), selected by type and time (inclusive), at most the limit; another
// account's are never listed; none is an empty result.
func testAlerts(t *testing.T, s nodestore.Store) {
	alert := func(account, typ, call string, at time.Time) nodestore.Alert {
		return nodestore.Alert{AccountSid: account, Type: typ, CallSid: call, URL: "https://app.example.com/" + call, Detail: "detail of " + call, Time: at}
	}
	added := []nodestore.Alert{
		alert("a", "webhook-failure", "c3", t0.Add(2*time.Second)),
		alert("a", "invalid-app-payload", "c1", t0),
		alert("a", "webhook-failure", "c2", t0.Add(300*time.Microsecond)), // the same millisecond as c1
		alert("b", "webhook-failure", "other", t0),
	}
	for _, a := range added {
		if err := s.AddAlert(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	list := func(p nodestore.ListAlertsParams) []string {
		t.Helper()
		alerts, err := s.ListAlerts(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		calls := []string{}
		for _, a := range alerts {
			calls = append(calls, a.CallSid)
		}
		return calls
	}
	for _, tt := range []struct {
		name string
		p    nodestore.ListAlertsParams
		want []string
	}{
		{"all", nodestore.ListAlertsParams{AccountSid: "a", Limit: 10}, []string{"c1", "c2", "c3"}},
		{"type", nodestore.ListAlertsParams{AccountSid: "a", Type: "webhook-failure", Limit: 10}, []string{"c2", "c3"}},
		{"since, inclusive", nodestore.ListAlertsParams{AccountSid: "a", Since: t0.Add(2 * time.Second), Limit: 10}, []string{"c3"}},
		{"limit", nodestore.ListAlertsParams{AccountSid: "a", Limit: 2}, []string{"c1", "c2"}},
		{"other account", nodestore.ListAlertsParams{AccountSid: "b", Limit: 10}, []string{"other"}},
		{"no alerts", nodestore.ListAlertsParams{AccountSid: "nobody", Limit: 10}, []string{}},
	} {
		if got := list(tt.p); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	alerts, err := s.ListAlerts(ctx, nodestore.ListAlertsParams{AccountSid: "a", Type: "invalid-app-payload", Limit: 1})
	if err != nil || len(alerts) != 1 || !reflect.DeepEqual(alerts[0], added[1]) {
		t.Fatalf("read back: %+v, %v; want %+v", alerts, err, added[1])
	}
	if alerts[0].Time.Location() != time.UTC {
		t.Fatalf("time %v, want UTC", alerts[0].Time)
	}
}

// testMessages: an account's messages, newest first, at most the limit, as added;
// another account's are never listed.
func testMessages(t *testing.T, s nodestore.Store) {
	msg := func(account, sid string, at time.Time) nodestore.Message {
		return nodestore.Message{MessageSid: sid, AccountSid: account, From: "+15550001", To: "+15550002", Text: "hello " + sid,
			Status: "success", CreatedAt: at}
	}
	for _, m := range []nodestore.Message{msg("a", "m1", t0), msg("a", "m2", t0.Add(time.Second)), msg("b", "m3", t0)} {
		if err := s.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ListMessages(ctx, "a", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].MessageSid != "m2" || !reflect.DeepEqual(got[1], msg("a", "m1", t0)) {
		t.Fatalf("ListMessages(a) = %+v", got)
	}
	if got, _ := s.ListMessages(ctx, "a", 1); len(got) != 1 {
		t.Fatalf("limit 1: %+v", got)
	}
	if err := s.AddMessage(ctx, msg("a", "m1", t0)); err == nil {
		t.Error("a message sid added twice")
	}
}
