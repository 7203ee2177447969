package webhooksig_test

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// The sender signs each attempt; the receiver verifies headers and the raw body.
func Example() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // from webhooksig.NewSecret()
	body := []byte(`{"test": 2432232314}`)
	sent := time.Unix(1614265330, 0)

	signer, err := webhooksig.NewSigner(secret)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := signer.Headers("msg_p5jXN8AQM9LWM0D4loKWxJek", sent, body)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("webhook-signature:", h.Get(webhooksig.HeaderSignature))

	verifier, err := webhooksig.NewVerifier(secret)
	if err != nil {
		fmt.Println(err)
		return
	}
	verifier.Clock = testkit.NewClockAt(sent.Add(2 * time.Second)) // normally the wall clock
	fmt.Println("genuine:", verifier.Verify(h, body))

	err = verifier.Verify(h, []byte(`{"test": 1}`))
	fmt.Println("tampered:", errors.Is(err, webhooksig.ErrInvalidSignature))

	verifier.Clock = testkit.NewClockAt(sent.Add(10 * time.Minute))
	err = verifier.Verify(h, body)
	fmt.Println("replayed later:", errors.Is(err, webhooksig.ErrTimestampTooOld))
	// Output:
	// webhook-signature: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
	// genuine: <nil>
	// tampered: true
	// replayed later: true
}

// During key rotation the sender holds the new and the old key; both signatures travel
// in one header and a receiver with either key accepts. A v1a (ed25519) receiver needs
// only the public key.
func ExampleSigner_rotation() {
	oldSecret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	newSecret := webhooksig.NewSecret()
	signingKey, publicKey := webhooksig.NewKeyPair()

	signer, _ := webhooksig.NewSigner(newSecret, oldSecret, signingKey)
	now := time.Now()
	h, _ := signer.Headers("evt_1", now, []byte(`{}`))

	for _, trusted := range []string{oldSecret, newSecret, publicKey} {
		v, _ := webhooksig.NewVerifier(trusted)
		fmt.Println(v.Verify(h, []byte(`{}`)))
	}
	// Output:
	// <nil>
	// <nil>
	// <nil>
}

// A call-control webhook carries a Jambonz-Signature made with the account's plain
// webhook secret; during rotation the receiver tries the new and the old secret and
// learns which one the sender used.
func ExampleMatchJambonz() {
	body := []byte(`{"call_sid":"abc"}`)
	sig := webhooksig.SignJambonz("my-webhook-secret", time.Unix(1700000000, 0), body)
	fmt.Println(sig)
	now := time.Unix(1700000060, 0)
	fmt.Println(webhooksig.VerifyJambonz("my-webhook-secret", sig, body, now, 0))
	fmt.Println(webhooksig.MatchJambonz([]string{"new-secret", "my-webhook-secret"}, sig, body, now, 0))
	_, err := webhooksig.MatchJambonz([]string{"new-secret"}, sig, body, now, 0)
	fmt.Println(err, errors.Is(err, webhooksig.ErrInvalidSignature))
	// Output:
	// t=1700000000,v1=00e6e485c7cef28f1f1d5f8a26eb7fde2bb7e9157b273c902e337de64772b90f
	// <nil>
	// 1 <nil>
	// Jambonz-Signature does not match (1 v1 signature(s) checked) true
}

// A receiver in the middle of a key rotation trusts both secrets and watches which
// one the sender still uses.
func ExampleVerifier_Matches() {
	const oldSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	newSecret := webhooksig.NewSecret()
	signer, _ := webhooksig.NewSigner(oldSecret)
	h, _ := signer.Headers("msg_1", time.Now(), []byte(`{}`))

	v := &webhooksig.Verifier{} // the default tolerance, on the wall clock
	current, _ := v.AddKey(newSecret)
	previous, _ := v.AddKey(oldSecret)
	matches, err := v.Matches(h, []byte(`{}`))
	fmt.Println(matches, err)
	fmt.Println(slices.Contains(matches, previous), slices.Contains(matches, current))
	// Output:
	// [{v1 1}] <nil>
	// true false
}
