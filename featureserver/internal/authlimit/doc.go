// Package authlimit limits failed authentication: wrong bearer tokens, wrong admin
// tokens and failed console sign-ins, per client address and per account, so that
// guessing is slow and a flood is refused cheaply (429 with Retry-After), while a
// request that authenticates is never slowed and never counted.
//
// Each address (an IPv6 address by its /64) and each account an attempt names has
// a budget of failures that refills at a steady rate (a token bucket). An address
// whose budget is spent is refused before its credentials are checked. An account
// whose budget is spent (guesses spread over many addresses) refuses the addresses
// that have not authenticated for it lately, so that its own clients keep working
// while it is attacked. The client's address comes from the request's context
// (WithClient), set once at the node's edge from the connection or, behind a trusted
// proxy, from X-Forwarded-For (ClientAddr). It decides nothing else: what a failure
// is, and what a refusal answers, are its callers'.
package authlimit
