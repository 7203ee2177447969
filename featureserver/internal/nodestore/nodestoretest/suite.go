package nodestoretest

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// Factory returns a fresh, empty store; it registers its own cleanup on t.
type Factory func(t *testing.T) nodestore.Store

// Run runs every conformance test against stores made by newStore. Each subtest gets
// its own store and runs in parallel.
func Run(t *testing.T, newStore Factory) {
	run := func(name string, contract func(*testing.T, nodestore.Store)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			contract(t, newStore(t))
		})
	}
	run("PutAccount", testPutAccount)
	run("AccountByToken", testAccountByToken)
	run("BootstrapTokens", testBootstrapTokens)
	run("ListAccounts", testListAccounts)
	run("Rotation", testRotation)
	run("DeleteAccount", testDeleteAccount)
	run("SaveApplication", testSaveApplication)
	run("ListApplications", testListApplications)
	run("DeleteApplication", testDeleteApplication)
	run("Alerts", testAlerts)
	run("Messages", testMessages)
	run("SaveCall", testSaveCall)
	run("ListCalls", testListCalls)
	run("ListCallsPages", testListCallsPages)
	run("DeleteCall", testDeleteCall)
	run("PurgeCalls", testPurgeCalls)
	run("InterruptActiveCalls", testInterruptActiveCalls)
	run("ActiveCalls", testActiveCalls)
	run("NodeLeases", testNodeLeases)
	run("InterruptLostCalls", testInterruptLostCalls)
	run("StatusHooks", testStatusHooks)
	run("Notifications", testNotifications)
	run("Sessions", testSessions)
	run("SessionLimit", testSessionLimit)
	run("SessionsEndWithTheirToken", testSessionsEndWithTheirToken)
	run("PurgeSessions", testPurgeSessions)
	run("Ping", testPing)
	run("CanceledContext", testCanceledContext)
}

var ctx = context.Background()

// t0 is the suite's reference time: on a millisecond, in UTC, as a store returns it.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func account(sid string) nodestore.Account {
	return nodestore.Account{Sid: sid, Name: "name of " + sid, WebhookSecret: "secret of " + sid, CreatedAt: t0}
}

func mustPut(t *testing.T, s nodestore.Store, p nodestore.PutAccountParams) {
	t.Helper()
	if err := s.PutAccount(ctx, p); err != nil {
		t.Fatalf("PutAccount(%s): %v", p.Account.Sid, err)
	}
}

// putAccounts stores accounts of the sids, which applications need.
func putAccounts(t *testing.T, s nodestore.Store, sids ...string) {
	t.Helper()
	for _, sid := range sids {
		mustPut(t, s, nodestore.PutAccountParams{Account: account(sid)})
	}
}
