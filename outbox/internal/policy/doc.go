// Package policy owns what the values of an endpoint's profile and overrides mean:
// the four built-in profiles (docs/outbox.md §3), resolving an endpoint's profile
// and Overrides into one Policy, the rules an override must satisfy, and the time one
// attempt may take. It is data and pure functions: deciding what an outcome does
// under a policy is package decide's, and storing the values is the store's.
package policy
