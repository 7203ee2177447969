package benchkit

import "syscall"

// ipBindAddressNoPort is Linux's IP_BIND_ADDRESS_NO_PORT (linux/in.h).
const ipBindAddressNoPort = 24

// bindAddressNoPort defers the choice of a bound socket's port to its connect.
func bindAddressNoPort(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort, 1) })
	if err != nil {
		return err
	}
	return serr
}
