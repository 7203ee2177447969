package outbox_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// hookSignature is a signature scheme of the embedding program's own: HMAC of the
// attempt's time and the bytes sent, as Jambonz-Signature is.
func hookSignature(at time.Time, body []byte) string {
	m := hmac.New(sha256.New, []byte("hook-secret"))
	m.Write([]byte(at.UTC().Format(time.RFC3339)))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// requestHarness is a harness whose outbox has a request hook.
func requestHarness(t *testing.T, renderer outbox.Renderer, hook func(ctx context.Context, r *outbox.Request) error) (*harness, *outbox.Outbox) {
	t.Helper()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	return h, h.another(outbox.Config{HTTPClient: loopbackClient(h.recv), UserAgent: "switchboard-test",
		Renderer: renderer, Request: hook})
}

// A request hook makes the attempt a GET: the rendered body's fields travel in the
// query beside the URL's own, nothing is in the body, and both the Standard Webhooks
// signature and the hook's own cover what is sent (nothing). Basic auth and headers
// the hook sets go out; the outbox's signature headers cannot be overridden.
func TestRequestHookGET(t *testing.T) {
	t.Parallel()
	flat := func(_ context.Context, ev outbox.Event, _ outbox.Endpoint) ([]byte, error) { return ev.Data, nil }
	var seen outbox.Request
	h, ob := requestHarness(t, flat, func(_ context.Context, r *outbox.Request) error {
		seen = *r
		if len(r.Body()) == 0 {
			t.Error("Body before the method changed is empty, want the rendered body")
		}
		r.Method = http.MethodGet
		r.SetBasicAuth("st", "pw")
		r.Header.Set("X-Hook-Signature", hookSignature(r.At, r.Body()))
		r.Header.Set("webhook-signature", "v1,forged")
		return nil
	})
	ep, err := ob.UpdateEndpoint(h.ctx, "acct", h.ep.ID, outbox.EndpointUpdate{URL: ptr(h.recv.srv.URL + "/status?tenant=b")})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ob.Publish(h.ctx, outbox.Event{Account: "acct", Type: "call.status",
		Data: json.RawMessage(`{"call_status":"completed","duration":12,"tags":{"a":1}}`)})
	if err != nil {
		t.Fatal(err)
	}
	h.runOn(ob)
	reqs := h.recv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	q := r.url.Query()
	if r.method != http.MethodGet || len(r.body) != 0 || r.header.Get("Content-Type") != "" ||
		q.Get("call_status") != "completed" || q.Get("duration") != "12" || q.Get("tags") != `{"a":1}` || q.Get("tenant") != "b" {
		t.Fatalf("%s %s, body %q, Content-Type %q: want a GET with the fields and tenant=b in the query, no body",
			r.method, r.url, r.body, r.header.Get("Content-Type"))
	}
	if u, p, ok := (&http.Request{Header: r.header}).BasicAuth(); !ok || u != "st" || p != "pw" {
		t.Fatalf("Basic auth %q:%q (%v)", u, p, ok)
	}
	if r.header.Get("User-Agent") != "switchboard-test" {
		t.Fatalf("User-Agent %q", r.header.Get("User-Agent"))
	}
	v, err := webhooksig.NewVerifier(ep.Secrets[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	v.Clock = h.clock
	if err := v.Verify(r.header, nil); err != nil {
		t.Fatalf("the Standard Webhooks signature does not cover the empty GET body: %v", err)
	}
	if got, want := r.header.Get("X-Hook-Signature"), hookSignature(h.clock.Now(), nil); got != want {
		t.Fatalf("the hook's signature %q, want %q over the empty body at the attempt's time", got, want)
	}
	if seen.Event.ID != pub.Event.ID || seen.Endpoint.ID != h.ep.ID || seen.Delivery.ID != pub.Deliveries[0].ID ||
		!seen.At.Equal(h.clock.Now()) || seen.Method != http.MethodPost {
		t.Fatalf("the hook saw %+v", seen)
	}
}

// As built, a request is a POST of the rendered body; the hook's signature over
// Body() and the Standard Webhooks signature both cover those bytes.
func TestRequestHookPOST(t *testing.T) {
	t.Parallel()
	h, ob := requestHarness(t, nil, func(_ context.Context, r *outbox.Request) error {
		r.Header.Set("X-Hook-Signature", hookSignature(r.At, r.Body()))
		return nil
	})
	h.publish()
	h.runOn(ob)
	reqs := h.recv.requests()
	if len(reqs) != 1 || reqs[0].method != http.MethodPost || len(reqs[0].body) == 0 ||
		reqs[0].header.Get("Content-Type") != "application/json" {
		t.Fatalf("requests %+v, want one JSON POST", reqs)
	}
	if got, want := reqs[0].header.Get("X-Hook-Signature"), hookSignature(h.clock.Now(), reqs[0].body); got != want {
		t.Fatalf("the hook's signature %q, want %q over the body sent", got, want)
	}
	if err := h.verify(h.ep.Secrets[0].Key, reqs[0]); err != nil {
		t.Fatal(err)
	}
}

// A request hook that fails, or asks for a method other than GET and POST, or a GET of
// a body that is not a JSON object, is a fault on our side: nothing is sent, no
// attempt is used, and the delivery is due again after the policy's FaultRetry.
func TestRequestHookFaults(t *testing.T) {
	t.Parallel()
	array := func(context.Context, outbox.Event, outbox.Endpoint) ([]byte, error) { return []byte(`[1,2]`), nil }
	for _, tc := range []struct {
		name     string
		renderer outbox.Renderer
		hook     func(context.Context, *outbox.Request) error
	}{
		{"error", nil, func(context.Context, *outbox.Request) error { return errors.New("no secret") }},
		{"method", nil, func(_ context.Context, r *outbox.Request) error { r.Method = http.MethodPut; return nil }},
		{"GET of an array", array, func(_ context.Context, r *outbox.Request) error { r.Method = http.MethodGet; return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, ob := requestHarness(t, tc.renderer, tc.hook)
			d := h.publish()
			if _, err := ob.RunDue(h.ctx); err != nil {
				t.Fatal(err)
			}
			got, attempts := h.delivery(d.ID)
			if n := len(h.recv.requests()); n != 0 || len(attempts) != 0 || got.Status != outbox.DeliveryPending ||
				got.Attempts != 0 || got.NextAttemptAt.Sub(h.clock.Now()) != 5*time.Minute {
				t.Fatalf("%d requests, delivery %+v with %d attempts: want nothing sent, due again in 5 min", n, got, len(attempts))
			}
		})
	}
}
