//go:build !linux

package enginesock

import (
	"errors"
	"net"
	"os"
)

// Supported reports whether this system can check a socket's peer.
const Supported = false

// PeerOf is not available here: no engine socket is trusted.
func PeerOf(c *net.UnixConn) (Peer, error) {
	return Peer{}, errors.New("enginesock: peer credentials are only checked on Linux")
}

func owner(fi os.FileInfo) (int, bool) { return 0, false }
