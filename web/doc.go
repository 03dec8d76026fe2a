// Package web holds the Palisade dashboard: plain HTML, CSS and ES modules with no build step,
// embedded with go:embed so `go build` works from a clean clone. host/admin serves FS at /ui; the
// page talks only to the documented admin API (host/admin/README.md).
package web
