package main

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// hookEngineSupported: the engine needs SO_PEERCRED.
const hookEngineSupported = true

// samePeer checks that the process at the other end of c runs as this user (SO_PEERCRED) and,
// when exe is set, that it runs exe itself (/proc/PID/exe is the same file): a process the
// guarded agent started under the socket's name cannot answer for the engine.
func samePeer(c *net.UnixConn, exe string) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("peer credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("peer uid %d is not this user (%d)", cred.Uid, os.Getuid())
	}
	if exe != "" {
		want, err := os.Stat(exe)
		if err != nil {
			return err
		}
		got, err := os.Stat(fmt.Sprintf("/proc/%d/exe", cred.Pid))
		if err != nil || !os.SameFile(want, got) {
			return fmt.Errorf("peer process %d does not run %s", cred.Pid, exe)
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
