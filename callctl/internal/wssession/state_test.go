package wssession

import "testing"

// The life of a session, as a table: every (state, event) pair that can happen and
// where it leads. Every pair not listed must be refused.
func TestTransitions(t *testing.T) {
	type pair struct {
		from State
		on   Event
	}
	allowed := map[pair]State{
		{Idle, Connected}: Open, // the first dial succeeded
		{Idle, Lose}:      Gone, // ... or failed

		{Open, Drop}:     Dropped, // abnormal close, read or write error, missed pongs, a fault
		{Resuming, Drop}: Dropped, // a drop while session:reconnect waits: a nested episode
		{Dropped, Drop}:  Dropped, // two faults due at the same message

		{Dropped, Redial}:        Reconnecting,
		{Reconnecting, Redialed}: Resuming,
		{Resuming, Resumed}:      Open, // session:reconnect acked; held messages go out

		{Open, PeerClosed}:     Closed, // close 1000 from the app: graceful, no reconnect
		{Resuming, PeerClosed}: Closed,

		{Dropped, Abandon}:      Gone, // the call ended while the drop was to be repaired
		{Reconnecting, Abandon}: Gone, // ... or during the episode (its wait cut short)
		{Resuming, Abandon}:     Gone,
		{Closed, Abandon}:       Gone,
		{Gone, Abandon}:         Gone,

		{Dropped, Lose}:      Gone, // too many drops in a row
		{Reconnecting, Lose}: Gone, // the episode's budget ran out
		{Resuming, Lose}:     Gone, // session:reconnect not acked
		{Closed, Lose}:       Gone, // the app closed while session:reconnect waited
		{Gone, Lose}:         Gone,

		{Open, Close}:     Gone, // the node ends the session: 1000, or 1001 when session:new failed
		{Dropped, Close}:  Gone,
		{Resuming, Close}: Gone,
		{Closed, Close}:   Gone,
		{Gone, Close}:     Gone,
	}
	for s := Idle; s <= Gone; s++ {
		for e := Connected; e <= Close; e++ {
			got, ok := next(s, e)
			want, allow := allowed[pair{s, e}]
			switch {
			case allow && (!ok || got != want):
				t.Errorf("%s --%s--> %s (allowed %v), want %s", s, e, got, ok, want)
			case !allow && ok:
				t.Errorf("%s --%s--> %s: must be refused", s, e, got)
			case !allow && got != s:
				t.Errorf("%s --%s--> refused but moved to %s", s, e, got)
			}
		}
	}
	if Gone.String() != "gone" || Close.String() != "close" || State(99).String() != "State(99)" {
		t.Error("names")
	}
}

// A refused event is a bug: the session logs it and fails safe, as gone.
func TestRefusedEventEndsTheSession(t *testing.T) {
	s := &Session{state: Idle}
	s.fire(Resumed)
	if s.state != Gone {
		t.Fatalf("state %s after a refused event, want gone", s.state)
	}
}
