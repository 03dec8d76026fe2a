package shell

import (
	"regexp"
	"strings"
)

// Risk is how much a path named on a command line matters by itself.
type Risk int

// Risks, in increasing order.
const (
	// RiskNone: nothing private (/dev/null, /tmp, project files, .env.example).
	RiskNone Risk = iota
	// RiskPersonal: the user's or the system's own files that are fine to read locally and
	// matter only when the line also talks to the network (~/.bashrc, /etc/hosts, ~/.venvs).
	RiskPersonal
	// RiskSecret: keys, credentials, password and secret stores (~/.ssh/id_rsa, /etc/shadow,
	// .env, /proc/self/environ), wherever the line sends them.
	RiskSecret
)

var (
	secretSystem = regexp.MustCompile(`/etc/(passwd|shadow|gshadow|sudoers|master\.passwd|security/|ssl/private|ssh/ssh_host_|krb5\.keytab|pam\.d)|/proc/(self|\d+)/(environ|mem|maps)|(^|[\s'"=@:])/root(/|$|\s)|/run/secrets|/var/run/secrets|/var/log/(auth|secure)|(^|/)\.(bash|zsh|sh)_history\b`)
	keyFile      = regexp.MustCompile(`\.(pem|key|p12|pfx|jks|keystore|ppk|kdbx)\b`)
	personal     = regexp.MustCompile(`(^|[\s'"=@:(])(~|\$HOME|\$\{HOME\}|/home/[^/\s]+|/Users/[^/\s]+)/\.|(^|[\s'"=@:(])/etc/`)
)

// PathRisk judges the paths named in one word of a command line (an argument, a redirect
// target, or inline code): the highest risk among them.
func PathRisk(w string) Risk {
	if secretSystem.MatchString(w) {
		return RiskSecret
	}
	for _, part := range strings.FieldsFunc(w, func(r rune) bool {
		return r == '=' || r == '@' || r == ' ' || r == '\'' || r == '"' || r == '(' || r == ')' || r == ','
	}) {
		if strings.HasSuffix(part, ".pub") {
			continue // a public key (~/.ssh/id_ed25519.pub) is published by design
		}
		if secretFile(part) {
			return RiskSecret
		}
		if keyFile.MatchString(part) && (strings.HasPrefix(part, "/") || home(part)) {
			return RiskSecret
		}
	}
	if personal.MatchString(w) {
		return RiskPersonal
	}
	return RiskNone
}

// OutputFlag reports whether flag, an option of command name, takes the file a download is
// saved to (curl -o, wget -O): the next word is written, not read.
func OutputFlag(name, flag string) bool {
	switch base(name) {
	case "curl":
		return flag == "-o" || flag == "--output" || strings.HasPrefix(flag, "-") && !strings.HasPrefix(flag, "--") && strings.HasSuffix(flag, "o")
	case "wget":
		return flag == "-O" || flag == "--output-document" || flag == "-P" || flag == "--directory-prefix"
	}
	return false
}

// KeygenOutput returns the index in argv of the key file ssh-keygen generates, or -1 when argv
// generates no key. ssh-keygen(1) (https://man.openbsd.org/ssh-keygen.1): in the generation
// form, `ssh-keygen [-q] [-a rounds] [-b bits] [-C comment] [-f output_keyfile] [-m format]
// [-N new_passphrase] [-O option] [-t type] [-w provider] [-Z cipher]`, -f names the file it
// writes (the private key, and the public one beside it with .pub); it reads no key. In every
// other form -f names a key that is read (-y prints the public half of a private key, -p
// rewrites its passphrase, -e exports it, -l fingerprints it), so any option outside the
// generation form, or an operand, is not generation.
func KeygenOutput(argv []string) int {
	if len(argv) == 0 || base(argv[0]) != "ssh-keygen" {
		return -1
	}
	out := -1
	for i := 1; i < len(argv); i++ {
		switch argv[i] {
		case "-q", "-v":
		case "-a", "-b", "-C", "-m", "-N", "-O", "-t", "-w", "-Z", "-f":
			if i+1 >= len(argv) {
				return -1
			}
			i++
			if argv[i-1] == "-f" {
				out = i
			}
		default:
			return -1
		}
	}
	return out
}

// homeCache reports whether p names one program's cache in the home directory:
// `~/.cache/<program>` and below (XDG Base Directory: "non-essential data files"), macOS's
// `~/Library/Caches/<program>`, or a folder named cache, caches or _cacache inside a tool's
// own dot-folder (`~/.kube/cache`, `~/.gradle/caches`, `~/.npm/_cacache`). The program fills
// it again, so deleting it loses nothing. `~/.cache` itself, a glob over it, a climb out
// (`..`), anything secret and anything the line cannot resolve are not this.
func homeCache(p string) bool {
	var rest string
	switch {
	case strings.HasPrefix(p, "~/"):
		rest = p[2:]
	case strings.HasPrefix(p, "$HOME/"):
		rest = p[6:]
	case strings.HasPrefix(p, "${HOME}/"):
		rest = p[8:]
	default:
		return false
	}
	if strings.ContainsAny(rest, "$`*?[{") || PathRisk(p) == RiskSecret {
		return false
	}
	parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	for _, x := range parts {
		if x == ".." || x == "." || x == "" {
			return false
		}
	}
	switch {
	case len(parts) >= 2 && parts[0] == ".cache":
		return true
	case len(parts) >= 3 && parts[0] == "Library" && parts[1] == "Caches":
		return true
	case len(parts) >= 2 && strings.HasPrefix(parts[0], ".") && parts[0] != ".ssh" && parts[0] != ".gnupg":
		for _, x := range parts[1:] {
			if x == "cache" || x == "caches" || x == "_cacache" {
				return true
			}
		}
	}
	return false
}
