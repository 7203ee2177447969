//go:build !race

package featureserver

// raceDetector: the tests run under the race detector, which multiplies the CPU
// time of every request several times over.
const raceDetector = false
