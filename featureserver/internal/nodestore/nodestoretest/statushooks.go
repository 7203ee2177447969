package nodestoretest

import (
	"errors"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// testStatusHooks: a status hook's configuration reads back with its URL set; a later
// save replaces it; the same URL with another query, or of another account, is
// another hook; an unknown one is ErrNotFound.
func testStatusHooks(t *testing.T, s nodestore.Store) {
	save := func(account, url string, h nodestore.HookSpec) {
		t.Helper()
		if err := s.SaveStatusHook(ctx, nodestore.SaveStatusHookParams{AccountSid: account, URL: url, Hook: h, At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(account, url string) (nodestore.HookSpec, error) {
		return s.GetStatusHook(ctx, nodestore.GetStatusHookParams{AccountSid: account, URL: url})
	}
	const url = "https://app.example.com/status"
	save("a", url, nodestore.HookSpec{URL: "ignored", Method: "GET", Username: "u", Password: "p"})
	save("a", url+"?tenant=b", nodestore.HookSpec{Method: "POST"})
	if got, err := get("a", url); err != nil || got != (nodestore.HookSpec{URL: url, Method: "GET", Username: "u", Password: "p"}) {
		t.Fatalf("GetStatusHook: %+v, %v", got, err)
	}
	if got, err := get("a", url+"?tenant=b"); err != nil || got != (nodestore.HookSpec{URL: url + "?tenant=b", Method: "POST"}) {
		t.Fatalf("the hook with a query: %+v, %v", got, err)
	}
	if err := s.SaveStatusHook(ctx, nodestore.SaveStatusHookParams{AccountSid: "a", URL: url, Hook: nodestore.HookSpec{Method: "POST"}, At: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got, err := get("a", url); err != nil || got != (nodestore.HookSpec{URL: url, Method: "POST"}) {
		t.Fatalf("after a later save: %+v, %v", got, err)
	}
	for _, missing := range [][2]string{{"b", url}, {"a", url + "?tenant=c"}} {
		if _, err := get(missing[0], missing[1]); !errors.Is(err, nodestore.ErrNotFound) {
			t.Fatalf("%v: %v, want ErrNotFound", missing, err)
		}
	}
}
