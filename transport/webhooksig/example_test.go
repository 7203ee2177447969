package webhooksig_test

import (
	"errors"
	"fmt"
	"time"

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
	verifier.Clock = fixedClock(sent.Add(2 * time.Second)) // normally the wall clock
	fmt.Println("genuine:", verifier.Verify(h, body))

	err = verifier.Verify(h, []byte(`{"test": 1}`))
	fmt.Println("tampered:", errors.Is(err, webhooksig.ErrInvalidSignature))

	verifier.Clock = fixedClock(sent.Add(10 * time.Minute))
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
