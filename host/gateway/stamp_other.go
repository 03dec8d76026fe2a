//go:build !linux

package gateway

import "io/fs"

// fileStat has no ctime or inode here: the stamp is name, size, mode and mtime.
func fileStat(fs.FileInfo) string { return "" }
