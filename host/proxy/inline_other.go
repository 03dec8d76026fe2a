//go:build !unix

package proxy

import "net"

// idleCheckWorks: without a peek that does not wait, every upstream request takes net/http's
// Transport (inlineTransport's fallback).
const idleCheckWorks = false

func idleCheck(net.Conn) bool { return false }
