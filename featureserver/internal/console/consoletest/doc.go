// Package consoletest runs what the console's browser tests and its screenshot
// command need: a real node on loopback (featureserver) with accounts, webhook
// receivers that answer from a script, and a headless Chromium driven through
// chromedp. It is test machinery, imported by tests and by the screenshots command
// only.
package consoletest
