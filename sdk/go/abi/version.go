package abi

import (
	"fmt"
	"strconv"
	"strings"
)

// Compatible reports whether a plugin whose describe states envelope schema version v
// (MAJOR.MINOR) can run on a host that implements Version: the major must be the same and the
// minor no newer. The error says which rule v breaks, in words an operator can act on.
//
// # Notes
//
// The version says nothing about the call convention: the host tells the direct convention and
// Extism compatibility apart by the module's exports (sdk/ABI.md "Versions").
func Compatible(v string) error {
	pmaj, pmin, ok := parseVersion(v)
	hmaj, hmin, _ := parseVersion(Version)
	switch {
	case !ok:
		return fmt.Errorf("plugin abi %q is not MAJOR.MINOR", v)
	case pmaj != hmaj:
		return fmt.Errorf("plugin abi %s: major %d differs from the host's envelope schema %s", v, pmaj, Version)
	case pmin > hmin:
		return fmt.Errorf("plugin abi %s is newer than the host's envelope schema %s: upgrade the gateway", v, Version)
	}
	return nil
}

func parseVersion(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(v, ".")
	if !found {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	return major, minor, err1 == nil && err2 == nil && major >= 0 && minor >= 0 && a[0] != '+' && b[0] != '+'
}
