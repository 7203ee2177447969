package outboxapi_test

import (
	"net/http"
	"testing"
	"time"
)

// The stats of an endpoint count its attempts of the window by hour and outcome:
// a receiver that failed twice, then took the delivery, shows two http_5xx and one
// success, all in the current hour; another account's token gets 404, and a window
// out of range is refused.
func TestWebhookStats(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(n int) int {
		if n < 2 {
			return 500
		}
		return 200
	})
	id := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{
		"url": rc.URL + "/", "policy": map[string]any{"scheduleSeconds": []float64{0, 0}, "allowHttp": true}})["id"].(string)
	did := e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "invoice.paid", "data": 1})["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	e.waitFor("three attempts", func() bool { return e.delivery("token-a", id, did)["status"] == "SUCCEEDED" })

	st := e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+id+"/stats", "token-a", nil)
	buckets := st["buckets"].([]any)
	if len(buckets) != 24 || st["bucketSeconds"] != 3600.0 || st["truncated"] != false {
		t.Fatalf("stats %v: want 24 hourly buckets", st)
	}
	totals := st["totals"].(map[string]any)
	if totals["http_5xx"] != 2.0 || totals["success"] != 1.0 || len(totals) != 2 {
		t.Fatalf("totals %v, want 2 http_5xx and 1 success", totals)
	}
	last := buckets[23].(map[string]any)
	if o := last["outcomes"].(map[string]any); o["http_5xx"] != 2.0 || o["success"] != 1.0 {
		t.Fatalf("the current hour's bucket %v", last)
	}
	start, _ := time.Parse(time.RFC3339, last["start"].(string))
	if now := time.Now(); now.Before(start) || now.Sub(start) > time.Hour+time.Minute {
		t.Fatalf("the last bucket starts at %v, not the current hour (%v)", start, now)
	}
	if n := len(e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+id+"/stats?hours=2", "token-a", nil)["buckets"].([]any)); n != 2 {
		t.Fatalf("hours=2: %d buckets", n)
	}
	if code, _ := e.call("GET", "/api/v1/webhooks/"+id+"/stats", "token-b", nil); code != http.StatusNotFound {
		t.Fatalf("account b's stats of account a's endpoint: %d, want 404", code)
	}
	for _, q := range []string{"?hours=0", "?hours=169", "?hours=x"} {
		if code, _ := e.call("GET", "/api/v1/webhooks/"+id+"/stats"+q, "token-a", nil); code != http.StatusUnprocessableEntity {
			t.Errorf("stats%s: %d, want 422", q, code)
		}
	}
}
