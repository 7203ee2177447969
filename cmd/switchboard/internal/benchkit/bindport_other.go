//go:build !linux

package benchkit

import "syscall"

// bindAddressNoPort does nothing where IP_BIND_ADDRESS_NO_PORT does not exist.
func bindAddressNoPort(_, _ string, _ syscall.RawConn) error { return nil }
