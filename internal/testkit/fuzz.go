package testkit

import "testing"

// AddSeeds adds each seed to f's corpus as the fuzz target's one argument, a string
// or a []byte as T says.
func AddSeeds[T string | []byte](f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add(T(s))
	}
}
