package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-voice/switchboard/transport"
)

// benchPayload is a typical call hook payload.
var benchPayload = map[string]any{
	"call_sid": "2ba2a3b0-1c1d-4b55-9a37-0e8d3c1e2f3a", "direction": "inbound",
	"from": "+15551234567", "to": "+15557654321", "call_status": "ringing",
	"account_sid": "acc-1", "application_sid": "app-1", "sip_status": 100,
}

// benchServer answers every request with a small verb array, as an app would.
func benchServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"verb":"say","text":"hello"}]`))
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkHookClient sends one hook through HookClient (retryablehttp, egress
// checks, capped body read). Compare with BenchmarkPlainHTTP in the same run.
func BenchmarkHookClient(b *testing.B) {
	srv := benchServer(b)
	client := transport.NewHookClient(transport.HookClientOptions{Rules: loopbackRules()})
	b.Cleanup(client.CloseIdleConnections)
	target := mustTarget(b, srv.URL+"/call")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Do(ctx, transport.HookRequest{Target: target, Payload: benchPayload})
		if err != nil || resp.Status != http.StatusOK {
			b.Fatalf("Do: %v", err)
		}
	}
}

// BenchmarkPlainHTTP is the baseline: the same request with a plain net/http client.
func BenchmarkPlainHTTP(b *testing.B) {
	srv := benchServer(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Cleanup(client.CloseIdleConnections)
	b.ReportAllocs()
	for b.Loop() {
		body, err := json.Marshal(benchPayload)
		if err != nil {
			b.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/call", bytes.NewReader(body))
		req.Header.Set("User-Agent", "jambonz")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d, %v", resp.StatusCode, err)
		}
	}
}
