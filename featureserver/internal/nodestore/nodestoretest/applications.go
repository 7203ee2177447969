package nodestoretest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

func application(account, sid string, created time.Time) nodestore.Application {
	return nodestore.Application{Sid: sid, AccountSid: account, Name: "app " + sid, CreatedAt: created,
		CallHook: nodestore.HookSpec{URL: "https://app.example.com/" + sid + "#rc=2&rp=5xx", Method: "GET", Username: "u", Password: "p"}}
}

// testSaveApplication: an application reads back as saved, with or without a status
// hook; saving it again replaces its name, hooks and settings (speech, env_vars) and
// keeps its creation time; an
// application of another account with the same sid is left alone and unseen.
func testSaveApplication(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "a", "b")
	app := application("a", "app1", t0)
	if err := s.SaveApplication(ctx, app); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: "a", Sid: "app1"})
	if err != nil || !reflect.DeepEqual(got, app) {
		t.Fatalf("GetApplication: %+v, %v; want %+v", got, err, app)
	}
	changed := app
	changed.Name, changed.CreatedAt = "renamed", t0.Add(time.Hour)
	changed.CallHook = nodestore.HookSpec{URL: "wss://app.example.com/ws"}
	changed.CallStatusHook = &nodestore.HookSpec{URL: "https://app.example.com/status?x=1", Method: "POST"}
	changed.ApplicationSettings = nodestore.ApplicationSettings{SpeechSynthesisVendor: "elevenlabs", SpeechSynthesisVoice: "rachel",
		FallbackSpeechRecognizerLabel: "backup", EnvVars: map[string]any{"GREETING": "hi", "N": float64(2)}}
	if err := s.SaveApplication(ctx, changed); err != nil {
		t.Fatal(err)
	}
	want := changed
	want.CreatedAt = t0
	got, err = s.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: "a", Sid: "app1"})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after saving again: %+v, %v; want %+v", got, err, want)
	}
	foreign := application("b", "app1", t0)
	foreign.Name = "b's take-over"
	if err := s.SaveApplication(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: "a", Sid: "app1"}); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("another account's save changed it: %+v, %v", got, err)
	}
	if _, err := s.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: "b", Sid: "app1"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("another account reading it: %v, want ErrNotFound", err)
	}
	if _, err := s.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: "a", Sid: "nope"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("a missing application: %v, want ErrNotFound", err)
	}
}

// testListApplications: the account's applications, oldest first, then by sid; none
// is an empty result.
func testListApplications(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "a", "b")
	for _, app := range []nodestore.Application{
		application("a", "late", t0.Add(time.Second)),
		application("a", "z-early", t0),
		application("a", "a-early", t0),
		application("b", "other", t0),
	} {
		if err := s.SaveApplication(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	apps, err := s.ListApplications(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	var sids []string
	for _, app := range apps {
		sids = append(sids, app.Sid)
	}
	if want := []string{"a-early", "z-early", "late"}; !reflect.DeepEqual(sids, want) {
		t.Fatalf("listed %v, want %v", sids, want)
	}
	if apps, err := s.ListApplications(ctx, "nobody"); err != nil || len(apps) != 0 {
		t.Fatalf("an account without applications: %v, %v", apps, err)
	}
}

// testDeleteApplication: deleting removes the application; a missing one, or one of
// another account, is ErrNotFound and nothing is deleted.
func testDeleteApplication(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "a", "b")
	for _, app := range []nodestore.Application{application("a", "app1", t0), application("a", "app2", t0)} {
		if err := s.SaveApplication(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteApplication(ctx, nodestore.DeleteApplicationParams{AccountSid: "b", Sid: "app1"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("another account deleting it: %v, want ErrNotFound", err)
	}
	if err := s.DeleteApplication(ctx, nodestore.DeleteApplicationParams{AccountSid: "a", Sid: "app1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteApplication(ctx, nodestore.DeleteApplicationParams{AccountSid: "a", Sid: "app1"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("deleting it twice: %v, want ErrNotFound", err)
	}
	if _, err := s.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: "a", Sid: "app1"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("a deleted application: %v, want ErrNotFound", err)
	}
	if apps, err := s.ListApplications(ctx, "a"); err != nil || len(apps) != 1 || apps[0].Sid != "app2" {
		t.Fatalf("left: %+v, %v; want app2 only", apps, err)
	}
}
