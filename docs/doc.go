// Package docs holds the repository's own documentation (the Markdown pages beside
// this file) and no code. Its test keeps docs/architecture.md true to the tree: the
// package table lists exactly the packages `go list ./...` reports, every import
// points to a lower layer than its importer's, the import graph drawn on the page is
// the tree's, and every citation of a docs/ section in the repository names a section
// that exists.
package docs
