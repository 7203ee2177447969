package webhooksig_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

func TestParseSignatureHeader(t *testing.T) {
	t.Parallel()
	v1 := vectorSignatureV1
	v1a := vectorSignatureV1a
	v2 := "v2," + b64(40, 9) // a future scheme: kept, ignored by Verify
	for _, tc := range []struct {
		name string
		in   string
		want []string // entries in "version,base64" form; nil means ErrMalformedHeader
	}{
		{"one v1", v1, []string{v1}},
		{"v1 and v1a", v1 + " " + v1a, []string{v1, v1a}},
		{"runs of spaces and tabs", "  " + v1 + " \t  " + v1a + " ", []string{v1, v1a}},
		{"unknown version kept", v2 + " " + v1, []string{v2, v1}},
		{"garbage entries skipped", "nocomma ,AAAA V1," + b64(32, 1) + " v1,@@@ " + v1, []string{v1}},
		{"v1 of the wrong length skipped", "v1," + b64(31, 1) + " " + v1a, []string{v1a}},
		{"v1a of the wrong length skipped", "v1a," + b64(32, 1) + " " + v1, []string{v1}},
		{"unpadded base64 skipped", strings.TrimRight(v1a, "=") + " " + v1, []string{v1}},
		{"version too long skipped", "v" + strings.Repeat("1", 16) + ",AAAA " + v1, []string{v1}},
		{"empty value skipped", "v1, " + v1, []string{v1}},
		{"second comma is not base64", v1 + ",extra", nil},
		{"empty", "", nil},
		{"only spaces", "   ", nil},
		{"only garbage", "t=1,v1=abcdef", nil},
		{"Stripe style", "t=1614265330,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd", nil},
		{"too many entries", strings.Repeat(v1+" ", webhooksig.MaxSignatures+1), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sigs, err := webhooksig.ParseSignatureHeader(tc.in)
			if tc.want == nil {
				if !errors.Is(err, webhooksig.ErrMalformedHeader) || sigs != nil {
					t.Fatalf("ParseSignatureHeader(%q) = %v, %v; want nil, ErrMalformedHeader", tc.in, sigs, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSignatureHeader(%q): %v", tc.in, err)
			}
			var got []string
			for _, s := range sigs {
				got = append(got, s.String())
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("ParseSignatureHeader(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseSignatureHeaderAcceptsMaxSignatures(t *testing.T) {
	t.Parallel()
	sigs, err := webhooksig.ParseSignatureHeader(strings.TrimSpace(strings.Repeat(vectorSignatureV1+" ", webhooksig.MaxSignatures)))
	if err != nil || len(sigs) != webhooksig.MaxSignatures {
		t.Fatalf("got %d signatures, %v; want %d", len(sigs), err, webhooksig.MaxSignatures)
	}
}

func TestParseSignatureHeaderDecodesValues(t *testing.T) {
	t.Parallel()
	sigs, err := webhooksig.ParseSignatureHeader(vectorSignatureV1 + " " + vectorSignatureV1a)
	if err != nil {
		t.Fatal(err)
	}
	if sigs[0].Version != webhooksig.VersionHMAC || len(sigs[0].Value) != 32 {
		t.Errorf("first = %s with %d bytes, want v1 with 32", sigs[0].Version, len(sigs[0].Value))
	}
	if sigs[1].Version != webhooksig.VersionEd25519 || len(sigs[1].Value) != 64 {
		t.Errorf("second = %s with %d bytes, want v1a with 64", sigs[1].Version, len(sigs[1].Value))
	}
}
