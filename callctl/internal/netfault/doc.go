// Package netfault is the faulty network of one simulated call: a scenario's network
// faults (docs/call-control.md §9), applied on the node's side of every connection the
// call makes, HTTP hooks and WebSocket alike, so that the application sees them as it
// would see a bad network. Latency (with jitter) delays every message each way; a slow
// application's answers arrive late; the call's first connection attempts are refused,
// or connect and are reset as the answer arrives.
//
// Network.Connect is a transport.ConnectFunc: the transport calls it only once its
// egress rules and URL checks passed the destination, so a fault can never reach
// what the rules refuse. The faults are real waits on the connection, whatever the
// call's clock: the network is real in a simulation too.
package netfault
