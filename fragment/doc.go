// Package fragment parses the retry fragment of jambonz-style application and hook
// URLs (`#rc=3&rp=5xx,ct`) into a Policy and the clean URL that is actually
// requested, resolves relative hooks against their application URL (inheriting its
// policy), and explains a URL: the retry delays and the time to failure against a host
// that drops connection attempts.
//
// It owns the contract of docs/call-control.md §1 and §2. It knows nothing about
// networks or calls: deciding what a concrete failure means is the job of package retry.
package fragment
