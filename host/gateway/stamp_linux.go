package gateway

import (
	"fmt"
	"io/fs"
	"syscall"
)

// fileStat is the part of a file's stamp only the kernel sets: its ctime and inode.
func fileStat(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d.%d %d:%d", st.Ctim.Sec, st.Ctim.Nsec, st.Dev, st.Ino)
}
