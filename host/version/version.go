package version

import (
	"runtime/debug"
	"strings"
)

// stamp is set at link time by the Makefile's build target:
//
//	-ldflags "-X github.com/added060/palisade/host/version.stamp=$(git describe --tags --always --dirty)"
//
// A package variable is the only way -X can reach; nothing else writes it.
var stamp string

// String returns this binary's version: the link-time stamp when there is one, else the module
// version `go install module@version` records, else the VCS revision Go stamps into a build
// from a checkout (with "-dirty" for uncommitted changes), else "dev".
//
// # Notes
//
// `go build` with -buildvcs=false (the Makefile's GOFLAGS) records no revision, which is why
// the build target stamps the version itself.
func String() string {
	if s := strings.TrimSpace(stamp); s != "" {
		return s
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo picks the version out of Go's build info; see String.
func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
