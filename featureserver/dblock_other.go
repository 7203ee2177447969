//go:build !unix

package featureserver

// lockDatabase takes no lock on platforms without flock: there, keeping one node per
// SQLite file is the operator's job.
func lockDatabase(string) (*databaseLock, error) { return &databaseLock{}, nil }

type databaseLock struct{}

func (*databaseLock) release() {}

// writable leaves the question to the write probe.
func writable(string) error { return nil }

// freeBytes leaves the question to the write probe.
func freeBytes(string) (uint64, error) { return ^uint64(0), nil }
