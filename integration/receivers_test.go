package integration

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// deliveryLedger is a webhook receiver's record for the kill tests: how many times
// each webhook-id arrived.
type deliveryLedger struct {
	mu    sync.Mutex
	seen  map[string]int
	total int
	// quarter is closed once a quarter of want requests arrived: the moment to kill.
	want    int
	quarter chan struct{}
}

func newDeliveryLedger(want int) *deliveryLedger {
	return &deliveryLedger{seen: map[string]int{}, want: want, quarter: make(chan struct{})}
}

// ServeHTTP records the delivery, then answers it as answerAfterLatency does.
func (l *deliveryLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.recordLocked(r.Header.Get("webhook-id"))
	l.mu.Unlock()
	answerAfterLatency(w, r)
}

// recordLocked counts one arrival of id; l.mu is held.
func (l *deliveryLedger) recordLocked(id string) {
	l.seen[id]++
	l.total++
	if l.total == l.want/4 {
		close(l.quarter)
	}
}

func (l *deliveryLedger) counts() (total, unique int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, len(l.seen)
}

// answerAfterLatency answers 204 after up to 3 ms, which keeps deliveries in flight
// when the kill lands; an attempt the kill cuts short ends it unanswered.
func answerAfterLatency(w http.ResponseWriter, r *http.Request) {
	latency := time.NewTimer(time.Duration(rand.IntN(3000)) * time.Microsecond)
	defer latency.Stop()
	select {
	case <-latency.C:
	case <-r.Context().Done():
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// requestGate holds a receiver's requests until it opens. Each arrival is signalled
// on arrived, and dropped once its buffer is full so that no request waits on the
// test. Open it before the receiver's server closes: Close waits for held requests.
type requestGate struct {
	arrived chan struct{}
	opened  chan struct{}
	once    sync.Once
}

func newRequestGate(arrivals int) *requestGate {
	return &requestGate{arrived: make(chan struct{}, arrivals), opened: make(chan struct{})}
}

// hold signals r's arrival and waits for the gate to open: true when it did, false
// when r's client went away first.
func (g *requestGate) hold(r *http.Request) bool {
	select {
	case g.arrived <- struct{}{}:
	default:
	}
	select {
	case <-g.opened:
		return true
	case <-r.Context().Done():
		return false
	}
}

// open lets every held and later request through; calling it again does nothing.
func (g *requestGate) open() { g.once.Do(func() { close(g.opened) }) }
