//go:build !linux

package main

import (
	"errors"
	"net"
)

// hookEngineSupported: without SO_PEERCRED the hook always decides in process.
const hookEngineSupported = false

var errNoPeerCred = errors.New("hook engine: peer credentials are checked on Linux only")

func samePeer(*net.UnixConn, string) error { return errNoPeerCred }

func ownedPrivateDir(string) error { return errNoPeerCred }
