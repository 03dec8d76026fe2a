package shell

import (
	"net/url"
	"strings"
)

// Package registries (issue 26, probing, 2026-12-01): where a package manager installs from
// decides what code runs (install scripts, build steps). An install from a named index other
// than the public ones, and a setting that points every later install at another registry or
// turns checksum checks off, ask: `pip install --extra-index-url http://…` is the dependency
// confusion pattern, `npm config set registry …` and `go env -w GOPROXY=…` move every later
// install. Before, an index URL was read as a package URL (`pip install --index-url
// https://pypi.org/simple requests` was refused) and the settings had no finding.

// indexOptions are the install options whose value is an index or registry (pip, uv, npm,
// yarn, pnpm).
var indexOptions = set("-i", "--index-url", "--extra-index-url", "--default-index", "--index", "-f", "--find-links", "--registry")

// fileOptions are install options whose value is a file (a requirements or constraints file).
var fileOptions = set("-r", "--requirement", "-c", "--constraint", "-e", "--editable")

// publicIndex reports whether u names a public package index: PyPI, PyTorch's wheel index,
// npm's and yarn's registries, GitHub's package registry, the Go module proxy.
func publicIndex(u string) bool {
	h := u
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		h = p.Hostname()
	}
	switch strings.ToLower(h) {
	case "pypi.org", "pypi.python.org", "files.pythonhosted.org", "test.pypi.org", "download.pytorch.org",
		"registry.npmjs.org", "registry.yarnpkg.com", "npm.pkg.github.com", "proxy.golang.org", "goproxy.io", "goproxy.cn":
		return true
	}
	return false
}

// indexValues splits install arguments into the rest and the index values they name.
func indexValues(args []string) (rest, indexes []string) {
	for i := 0; i < len(args); i++ {
		x := args[i]
		k, v, attached := strings.Cut(x, "=")
		switch {
		case indexOptions[k] && attached:
			indexes = append(indexes, v)
		case indexOptions[x] && i+1 < len(args):
			indexes = append(indexes, args[i+1])
			i++
		case fileOptions[x] && i+1 < len(args):
			i++
		case fileOptions[k] && attached:
		default:
			rest = append(rest, x)
		}
	}
	return rest, indexes
}

// otherIndex asks about each index that is not a public one (or a local path, which a wheel
// house is).
func (a *analyzer) otherIndex(indexes []string, line string) {
	for _, u := range indexes {
		if publicIndex(u) || !strings.Contains(u, "://") {
			continue
		}
		a.ask("exec/package_index", "installs from a package index other than the public one (its packages' scripts run)", line, 0.85)
		return
	}
}

// registrySetting asks about a package manager's setting that moves every later install or
// turns its checks off: pip/npm/yarn/pnpm config of the index or registry (npm's script-shell
// too: every script then runs through it), `go env -w` of GOPROXY, GOINSECURE, GONOSUMDB,
// GONOSUMCHECK, GOFLAGS=-insecure, and git's `url.<base>.insteadOf` (every clone of the
// original goes to the base instead).
func (a *analyzer) registrySetting(name string, args []string, line string) {
	switch name {
	case "pip", "pip3", "npm", "yarn", "pnpm":
		if ops := operands(args); len(ops) >= 4 && ops[0] == "config" && ops[1] == "set" {
			key, val := strings.ToLower(ops[2]), ops[3]
			if key == "script-shell" || (strings.HasSuffix(key, "index-url") || strings.HasSuffix(key, "registry")) && !publicIndex(val) {
				a.ask("exec/package_index", "points the package manager's later installs at another registry or shell", line, 0.85)
			}
			// npm's strict-ssl (yarn 2's enableStrictSsl) off, or a pip host trusted without
			// HTTPS checks: every later download can be swapped on the way.
			if (key == "strict-ssl" || key == "enablestrictssl") && falsy(val) || strings.HasSuffix(key, "trusted-host") && val != "" {
				a.ask("exec/tls_off", "turns certificate checks off for the package manager's later downloads", line, 0.85)
			}
		}
	case "go":
		if len(args) >= 2 && args[0] == "env" && hasFlag(args, "-w") {
			for _, x := range args[1:] {
				if k, v, ok := strings.Cut(x, "="); ok && goRegistryVar(k, v) {
					a.ask("exec/package_index", "points Go's later downloads at another proxy or turns its checksum checks off", line, 0.85)
					return
				}
			}
		}
	}
}

// tlsOffVar reports whether setting the environment variable k to v turns certificate checks
// off for the programs that read it (issue 26, det65): Node's NODE_TLS_REJECT_UNAUTHORIZED=0
// (nodejs.org/api/cli.html), Python's PYTHONHTTPSVERIFY=0 (PEP 493), git's GIT_SSL_NO_VERIFY
// set to anything (git(1): "setting this to true"; http.c tests only that it is set), npm's
// and yarn's strict-ssl set false through the environment, pip's PIP_TRUSTED_HOST, and an
// empty CURL_CA_BUNDLE or REQUESTS_CA_BUNDLE, which requests reads as "verify nothing" (its
// documented workaround for a proxy). A path to a bundle (NODE_EXTRA_CA_CERTS,
// REQUESTS_CA_BUNDLE=/etc/ssl/…) adds a trusted authority and checks on: not this.
func tlsOffVar(k, v string) bool {
	if strings.Contains(v, "$") {
		return false // a variable the line does not set: not known here
	}
	switch strings.ToUpper(k) {
	case "NODE_TLS_REJECT_UNAUTHORIZED", "PYTHONHTTPSVERIFY":
		return v == "0"
	case "GIT_SSL_NO_VERIFY", "PIP_TRUSTED_HOST":
		return v != ""
	case "NPM_CONFIG_STRICT_SSL", "YARN_STRICT_SSL", "YARN_ENABLE_STRICT_SSL":
		return falsy(v)
	case "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE":
		return v == ""
	}
	return false
}

// goRegistryVar reports whether setting the environment variable k to v moves Go's module
// downloads off the public proxy or turns checksum or TLS checks off, or points pip, uv, npm
// or yarn at another index.
func goRegistryVar(k, v string) bool {
	if strings.Contains(v, "$") {
		return false // a variable the line does not set (`NPM_CONFIG_REGISTRY="${REGISTRY}"`): not known here
	}
	switch k {
	case "GOPROXY":
		for _, p := range strings.Split(v, ",") {
			if p != "direct" && p != "off" && !publicIndex(p) && !strings.HasPrefix(p, "file://") {
				return true
			}
		}
	case "GOINSECURE", "GONOSUMDB", "GONOSUMCHECK":
		return v != ""
	case "GOFLAGS":
		return strings.Contains(v, "-insecure")
	case "GOSUMDB":
		return v == "off"
	case "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "NPM_CONFIG_REGISTRY", "npm_config_registry", "YARN_REGISTRY":
		return v != "" && !publicIndex(v)
	}
	return false
}

// falsy reports whether a configuration value means off (git-config(1)'s false, no, off, 0).
func falsy(v string) bool {
	switch strings.ToLower(strings.Trim(v, `"'`)) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}
