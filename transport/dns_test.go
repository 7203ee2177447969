package transport_test

import "net"

func notFound(host string) error {
	return &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func temporaryDNS(host string) error {
	return &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
}

func timeoutDNS(host string) error {
	return &net.DNSError{Err: "i/o timeout", Name: host, IsTimeout: true, IsTemporary: true}
}
