package transport

import (
	"context"
	"net"
)

// WithNetwork makes the HookClient built from opts connect through dial (such as
// transporttest.Pipes.DialContext) instead of the operating system, once the egress
// rules have passed the address: under testing/synctest an in-memory network lets the
// bubble's clock run the client's timeouts.
func WithNetwork(opts HookClientOptions, dial func(ctx context.Context, network, address string) (net.Conn, error)) HookClientOptions {
	opts.network = &network{dial: dial}
	return opts
}
