package secretbox

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func mustParse(t *testing.T, v string) *Keyring {
	t.Helper()
	k, err := Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A sealed secret shows nothing of itself, opens back where it was sealed and
// nowhere else, under any key of the ring but not without its key.
func TestSealOpen(t *testing.T) {
	t.Parallel()
	k1, k2 := NewKey(), NewKey()
	ring := mustParse(t, k1)
	sealed, err := ring.Seal("whsec_hunter2", "accounts.secret:a")
	if err != nil || !Sealed(sealed) || strings.Contains(sealed, "hunter2") {
		t.Fatalf("sealed %q, %v", sealed, err)
	}
	if again, _ := ring.Seal("whsec_hunter2", "accounts.secret:a"); again == sealed {
		t.Error("two seals of one secret are alike: the nonce is not random")
	}
	if got, err := ring.Open(sealed, "accounts.secret:a"); err != nil || got != "whsec_hunter2" {
		t.Fatalf("open: %q, %v", got, err)
	}
	if _, err := ring.Open(sealed, "accounts.secret:b"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("opened where it was not sealed: %v", err)
	}
	if _, err := ring.Open(sealed[:len(sealed)-2]+"AA", "accounts.secret:a"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a damaged value: %v", err)
	}
	rotated := mustParse(t, k2+","+k1)
	if got, err := rotated.Open(sealed, "accounts.secret:a"); err != nil || got != "whsec_hunter2" {
		t.Errorf("an old key after rotation: %q, %v", got, err)
	}
	if _, err := mustParse(t, k2).Open(sealed, "accounts.secret:a"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("without the key that sealed it: %v", err)
	}
	var none *Keyring
	if _, err := none.Open(sealed, "accounts.secret:a"); !errors.Is(err, ErrNoKey) {
		t.Errorf("without any key: %v", err)
	}
	if got, err := none.Seal("clear", "x"); err != nil || got != "clear" {
		t.Errorf("no key seals nothing: %q, %v", got, err)
	}
	if got, err := ring.Open("legacy-clear", "x"); err != nil || got != "legacy-clear" {
		t.Errorf("a value in clear opens as it is: %q, %v", got, err)
	}
}

// Reseal moves values to the first key and leaves current ones alone.
func TestReseal(t *testing.T) {
	t.Parallel()
	k1, k2 := NewKey(), NewKey()
	old := mustParse(t, k1)
	sealed, _ := old.Seal("s", "w")
	ring := mustParse(t, k2+","+k1)
	for _, stored := range []string{sealed, "s"} {
		out, changed, err := ring.Reseal(stored, "w")
		if err != nil || !changed || !ring.Current(out) {
			t.Fatalf("reseal %q: %q %v %v", stored, out, changed, err)
		}
		if plain, _ := mustParse(t, k2).Open(out, "w"); plain != "s" {
			t.Fatalf("resealed %q opens to %q", out, plain)
		}
		if _, changed, _ := ring.Reseal(out, "w"); changed {
			t.Error("a current value was sealed again")
		}
	}
}

// Bad keys are refused without showing them.
func TestParseRefuses(t *testing.T) {
	t.Parallel()
	k := NewKey()
	for _, v := range []string{"short", "bm90IDMyIGJ5dGVz", k + "," + k, "!!!!"} {
		if _, err := Parse(v); err == nil || strings.Contains(err.Error(), v) && v != "" {
			t.Errorf("Parse(%q): %v", v, err)
		}
	}
	if r, err := Parse(" , "); err != nil || r.Enabled() {
		t.Errorf("no key: %v %v", r, err)
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Parse and Open take outside input (the variable, the stored values): whatever
// they get, they either refuse it or give back what Seal sealed.
func FuzzParseAndOpen(f *testing.F) {
	k := NewKey()
	ring, _ := Parse(k)
	sealed, _ := ring.Seal("s", "w")
	f.Add(k, sealed)
	f.Add(k+","+NewKey(), "sbx1:00000000:AAAA")
	f.Add("", "clear")
	f.Fuzz(func(t *testing.T, keys, stored string) {
		r, err := Parse(keys)
		if err != nil {
			return
		}
		if got, err := r.Open(stored, "w"); err == nil && !Sealed(stored) && got != stored {
			t.Fatalf("a value in clear opened to %q", got)
		}
		if out, err := r.Seal("secret", "w"); err == nil {
			if got, err := r.Open(out, "w"); err != nil || got != "secret" {
				t.Fatalf("sealed %q opens to %q, %v", out, got, err)
			}
		}
	})
}

// BenchmarkOpen is what a delivery's attempt costs more with a key: opening its
// endpoint's signing key.
func BenchmarkOpen(b *testing.B) {
	ring, _ := Parse(NewKey())
	sealed, _ := ring.Seal("whsec_"+strings.Repeat("k", 43), "outbox_endpoints.secrets:ep_0123")
	for b.Loop() {
		if _, err := ring.Open(sealed, "outbox_endpoints.secrets:ep_0123"); err != nil {
			b.Fatal(err)
		}
	}
}
