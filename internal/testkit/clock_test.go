package testkit

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	c := NewClock()
	if got := c.Now(); !got.Equal(Epoch) {
		t.Fatalf("new clock at %v, want %v", got, Epoch)
	}
	c.Advance(90 * time.Minute)
	if got, want := c.Now(), Epoch.Add(90*time.Minute); !got.Equal(want) {
		t.Fatalf("after Advance: %v, want %v", got, want)
	}
	c.SetStep(time.Second)
	first, second := c.Now(), c.Now()
	if second.Sub(first) != time.Second {
		t.Fatalf("stepping clock read %v then %v, want 1s apart", first, second)
	}
	at := time.Unix(1_700_000_000, 0)
	c.Set(at)
	if got := c.Now(); !got.Equal(at) {
		t.Fatalf("after Set: %v, want %v", got, at)
	}
}
