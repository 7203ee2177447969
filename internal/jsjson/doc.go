// Package jsjson writes JSON exactly as JavaScript's JSON.stringify writes it, so
// that what a node sends an application (hook bodies, WebSocket messages, status
// notifications) is byte for byte what jambonz would send, and a verifier that
// re-serialises the parsed body (JSON.stringify(JSON.parse(body)), as the official
// SDK's signature middleware does) gets the very bytes that were signed
// (docs/call-control.md §3). It does not send or sign anything.
package jsjson
