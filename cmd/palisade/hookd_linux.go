package main

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/added060/palisade/host/enginesock"
)

// hookEngineSupported: the engine needs SO_PEERCRED.
const hookEngineSupported = true

// samePeer checks that the process at the other end of c runs as this user (SO_PEERCRED) and,
// when exe is set, that it runs exe itself (/proc/PID/exe is the same file): a process the
// guarded agent started under the socket's name cannot answer for the engine.
func samePeer(c *net.UnixConn, exe string) error {
	cred, err := enginesock.PeerOf(c) // SO_PEERCRED, as the engine socket reads it
	if err != nil {
		return err
	}
	if cred.UID != os.Getuid() {
		return fmt.Errorf("peer uid %d is not this user (%d)", cred.UID, os.Getuid())
	}
	if exe != "" {
		want, err := os.Stat(exe)
		if err != nil {
			return err
		}
		got, err := os.Stat(fmt.Sprintf("/proc/%d/exe", cred.PID))
		if err != nil || !os.SameFile(want, got) {
			return fmt.Errorf("peer process %d does not run %s", cred.PID, exe)
		}
	}
	return nil
}

// ownedPrivateDir checks that dir is a folder (not a link) this user owns with no access for
// group or others.
func ownedPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s must be a folder owned by uid %d with mode 0700", dir, os.Getuid())
	}
	return nil
}
