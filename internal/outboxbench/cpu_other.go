//go:build !unix

package outboxbench

import "time"

// processCPU is not measured here: the figures that need it stay zero.
func processCPU() (time.Duration, bool) { return 0, false }
