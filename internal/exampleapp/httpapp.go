package exampleapp

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// HTTPApp is a jambonz webhook application: POST /call answers with the welcome
// document, POST /gather with the answer to the caller's input, POST /status
// records call status notifications. With a Secret it refuses requests whose
// Jambonz-Signature does not verify (401).
type HTTPApp struct {
	// Secret, when set, is the webhook signing secret.
	Secret string

	mu       sync.Mutex
	requests []Request
}

// Request is one webhook the app received.
type Request struct {
	Path    string
	Method  string
	Payload map[string]any
}

// ServeHTTP routes the webhooks.
func (a *HTTPApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	if a.Secret != "" {
		if err := webhooksig.VerifyJambonz(a.Secret, r.Header.Get(webhooksig.JambonzSignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
	}
	payload := map[string]any{}
	if r.Method == http.MethodPost {
		if err := json.Unmarshal(body, &payload); err != nil {
			http.Error(w, "want a JSON object", http.StatusBadRequest)
			return
		}
	} else {
		for k, v := range r.URL.Query() {
			payload[k] = v[0]
		}
	}
	a.mu.Lock()
	a.requests = append(a.requests, Request{Path: r.URL.Path, Method: r.Method, Payload: payload})
	a.mu.Unlock()
	switch r.URL.Path {
	case "/call":
		writeVerbs(w, welcome("/gather"))
	case "/gather":
		writeVerbs(w, answer(gatherResult(payload)))
	case "/status":
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// Requests returns the webhooks received so far, in order.
func (a *HTTPApp) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.requests...)
}

func writeVerbs(w http.ResponseWriter, vs []verb) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(vs)
}
