// Package shellguard is the logic of the Go example plugin: it asks a human before destructive
// shell commands (rm -rf, git push --force, mkfs...) and denies remote-code pipelines
// (curl ... | sh) passed to tools in a `command` argument. It is plain Go so `go test` runs it
// natively; ../main.go is the wasip1 shim that exports it as a Palisade plugin.
package shellguard
