//go:build unix

package wsclient

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// waiting reports whether bytes (or the end of the connection) wait in nc's socket,
// without reading them or waiting; false when it cannot tell. A connection wrapped
// in another is looked into through NetConn, except a tls.Conn: it reads whole
// records, and bytes in its socket (part of a record, or a record with no data in
// it, a session ticket) do not say that it can return any without waiting.
func waiting(nc net.Conn) bool {
	for {
		if _, ok := nc.(*tls.Conn); ok {
			return false
		}
		if sc, ok := nc.(syscall.Conn); ok {
			rc, err := sc.SyscallConn()
			if err != nil {
				return false
			}
			ready := false
			var b [1]byte
			_ = rc.Control(func(fd uintptr) {
				_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
				ready = !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EWOULDBLOCK)
			})
			return ready
		}
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			return false
		}
		nc = u.NetConn()
	}
}
