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
