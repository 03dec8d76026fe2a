package main

// Every input of the held-out set, pinned. The generator fetches each through its registry's
// own client (go mod download, npm pack) into a cache folder and reads it from there, so the same
// list always gives the same files. data/SOURCES.md repeats this table with the licences.

// goModule is a Go module fetched with `go mod download -json Path@Version`.
type goModule struct {
	Path, Version, License string
	// Name is the short repository name used in synthetic working directories.
	Name string
}

// npmPackage is an npm package fetched with `npm pack Name@Version`.
type npmPackage struct {
	Name, Version, License string
}

var goModules = []goModule{
	{"github.com/docker/cli", "v29.9.3+incompatible", "Apache-2.0", "docker-cli"},
	{"github.com/gin-gonic/gin", "v1.12.0", "MIT", "gin"},
	{"github.com/go-chi/chi/v5", "v5.5.0", "MIT", "chi"},
	{"github.com/golang-jwt/jwt/v5", "v5.3.1", "MIT", "jwt"},
	{"github.com/Masterminds/squirrel", "v1.5.4", "MIT", "squirrel"},
	{"github.com/microcosm-cc/bluemonday", "v1.0.27", "BSD-3-Clause", "bluemonday"},
	{"github.com/sqlc-dev/sqlc", "v1.31.1", "MIT", "sqlc"},
	{"github.com/pressly/goose/v3", "v3.30.0", "MIT", "goose"},
	{"golang.org/x/pkgsite", "v0.6.0", "BSD-3-Clause", "pkgsite"},
	{"github.com/labstack/echo/v4", "v4.13.4", "MIT", "echo"},
	{"github.com/nats-io/nats-server/v2", "v2.15.2", "Apache-2.0", "nats-server"},
	{"github.com/corazawaf/coraza-coreruleset/v4", "v4.25.0", "Apache-2.0", "coreruleset"},
}

var npmPackages = []npmPackage{
	{"blns", "2.0.4", "MIT"},
	{"promptfoo", "0.123.1", "MIT"},
}

// securityModules hold documentation and code about attacks (sanitizers, WAF rules, SQL
// builders): every benign record from them is a hard negative.
var securityModules = map[string]bool{
	"github.com/microcosm-cc/bluemonday":         true,
	"github.com/Masterminds/squirrel":            true,
	"github.com/corazawaf/coraza-coreruleset/v4": true,
}
