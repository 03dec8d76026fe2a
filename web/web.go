package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// FS is the dashboard's files, rooted at the static folder (index.html at the top).
var FS fs.FS = mustSub(static, "static")

func mustSub(f fs.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // dir is a constant that go:embed guarantees
	}
	return s
}
