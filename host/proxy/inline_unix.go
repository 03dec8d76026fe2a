//go:build unix

package proxy

import (
	"net"
	"syscall"
)

// idleCheckWorks: idleCheck can tell an open idle connection from a closed one here.
const idleCheckWorks = true

// idleCheck reports whether a kept connection is still open and has nothing to read: a peek
// that does not wait finds EOF when the server closed it while idle, bytes when it sent
// something nobody asked for, and EAGAIN when all is well.
func idleCheck(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true // never wait for the poller
	})
	return err == nil && alive
}
