package nodeapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// An application view never shows a password: not the hooks' own, masked, nor one
// in the user-info of a URL stored before such URLs were refused (issue 13).
func TestRedactApplication(t *testing.T) {
	app := redactApplication(nodestore.Application{
		CallHook:       nodestore.HookSpec{URL: "https://alice:hunter2@app.example.com/call#rc=1", Username: "u", Password: "hunter2"},
		CallStatusHook: &nodestore.HookSpec{URL: "https://bob:hunter2@app.example.com/status"},
	})
	b, _ := json.Marshal(app)
	if strings.Contains(string(b), "hunter2") || app.CallHook.URL != "https://app.example.com/call#rc=1" ||
		app.CallStatusHook.URL != "https://app.example.com/status" || app.CallHook.Password != "********" {
		t.Fatalf("view %s", b)
	}
}
