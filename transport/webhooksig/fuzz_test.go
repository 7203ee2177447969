package webhooksig_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

func FuzzParseSignatureHeader(f *testing.F) {
	testkit.AddSeeds[string](f,
		vectorSignatureV1,
		vectorSignatureV1a,
		vectorSignatureV1+" "+vectorSignatureV1a,
		"v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==", // the spec's example header
		"v2,AAAA v1,",
		"t=1614265330,v1=abcdef",
		"v1,\r\n"+strings.TrimPrefix(vectorSignatureV1, "v1,"),
		"",
		",,, ,",
		"v1a,"+strings.Repeat("A", 86)+"==",
	)
	f.Fuzz(func(t *testing.T, v string) {
		sigs, err := webhooksig.ParseSignatureHeader(v)
		if err != nil {
			if !errors.Is(err, webhooksig.ErrMalformedHeader) || sigs != nil {
				t.Fatalf("ParseSignatureHeader(%q) = %v, %v", v, sigs, err)
			}
			return
		}
		if len(sigs) == 0 || len(sigs) > webhooksig.MaxSignatures {
			t.Fatalf("ParseSignatureHeader(%q) returned %d entries without an error", v, len(sigs))
		}
		var again []string
		for _, s := range sigs {
			switch s.Version {
			case webhooksig.VersionHMAC:
				if len(s.Value) != 32 {
					t.Fatalf("v1 entry with %d bytes", len(s.Value))
				}
			case webhooksig.VersionEd25519:
				if len(s.Value) != 64 {
					t.Fatalf("v1a entry with %d bytes", len(s.Value))
				}
			}
			if len(s.Value) == 0 || s.Version == "" || strings.ContainsAny(s.Version, ", \t") {
				t.Fatalf("ill-formed entry %+v accepted from %q", s, v)
			}
			// Every accepted entry appears verbatim in the input: nothing is invented.
			if !strings.Contains(v, s.String()) {
				t.Fatalf("entry %q is not in the input %q", s.String(), v)
			}
			again = append(again, s.String())
		}
		// Serializing the entries and parsing them again is the identity.
		reparsed, err := webhooksig.ParseSignatureHeader(strings.Join(again, " "))
		if err != nil || len(reparsed) != len(sigs) {
			t.Fatalf("re-parse of %q: %d entries, %v", again, len(reparsed), err)
		}
		for i := range sigs {
			if reparsed[i].Version != sigs[i].Version || !bytes.Equal(reparsed[i].Value, sigs[i].Value) {
				t.Fatalf("re-parse changed entry %d: %+v -> %+v", i, sigs[i], reparsed[i])
			}
		}
	})
}

// FuzzVerify feeds arbitrary headers and bodies to a Verifier. It must not panic, must
// answer with one of the package's sentinels, and must accept a message only when the
// header really carries our signature of exactly that id, timestamp and body.
func FuzzVerify(f *testing.F) {
	now := time.Unix(vectorTimestamp, 0)
	signer, err := webhooksig.NewSigner(vectorSecret, vectorSigningKey)
	if err != nil {
		f.Fatal(err)
	}
	key, err := webhooksig.ParseSigningKey(vectorSigningKey)
	if err != nil {
		f.Fatal(err)
	}
	verifier, err := webhooksig.NewVerifier(vectorSecret, key.Public().Encode())
	if err != nil {
		f.Fatal(err)
	}
	verifier.Clock = testkit.NewClockAt(now)

	f.Add(vectorID, "1614265330", vectorSignatureV1, []byte(vectorBody))
	f.Add(vectorID, "1614265330", vectorSignatureV1a, []byte(vectorBody))
	f.Add(vectorID, "1614265330", vectorSignatureV1+" "+vectorSignatureV1a, []byte(vectorBody+" "))
	f.Add(vectorID, "1614265331", vectorSignatureV1, []byte(vectorBody))
	f.Add("msg.1", "1614265330", vectorSignatureV1, []byte{})
	f.Add("", "", "", []byte(nil))
	f.Add(vectorID, "+1614265330", "v1,", []byte("{}"))
	f.Add(vectorID, "99999999999999999999", "v1a,AAAA", []byte("{}"))
	f.Add(vectorID, "01614265330", vectorSignatureV1, []byte(vectorBody))
	f.Add(vectorID, "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE", []byte(vectorBody))

	sentinels := []error{
		webhooksig.ErrMissingHeaders, webhooksig.ErrMalformedHeader, webhooksig.ErrInvalidSignature,
		webhooksig.ErrTimestampTooOld, webhooksig.ErrTimestampTooNew,
	}
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", sig)
		err := verifier.Verify(h, body)
		if err != nil {
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("Verify error %v wraps none of the sentinels", err)
		}
		// Accepted: the timestamp must be the signed one and one of our own entries
		// for this exact message must be in the header.
		want, serr := signer.Sign(id, now, body)
		if serr != nil {
			t.Fatalf("Verify accepted id %q that Sign refuses: %v", id, serr)
		}
		if ts != "1614265330" {
			t.Fatalf("Verify accepted timestamp %q, only the signing time was ever signed", ts)
		}
		found := false
		for _, entry := range strings.Fields(want) {
			for _, got := range strings.Fields(sig) {
				if got == entry {
					found = true
				}
			}
		}
		if !found {
			t.Fatalf("Verify accepted %q for id %q body %q without our signature %q", sig, id, body, want)
		}
	})
}
