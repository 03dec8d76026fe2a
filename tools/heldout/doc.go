// Command heldout builds the held-out set (data/heldout): real benign tool calls that no one
// on the team wrote, and public attack lines placed in the tool fields where they are attacks.
// Every input is a pinned Go module (go mod download) or npm package (npm pack), listed in
// sources.go and data/SOURCES.md; the same inputs always give byte-identical files. Attack lines
// that are not attacks in their field are written to dropped.jsonl with the reason, and
// COUNTS.md counts records and drops. See tools/heldout/README.md.
//
// Usage:
//
//	go run ./tools/heldout [-out data/heldout] [-cache build/_heldout-src]
package main
