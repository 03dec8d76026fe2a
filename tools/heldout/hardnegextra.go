package main

import (
	"io"
	"path/filepath"
	"regexp"
	"sort"
)

// The extra hard-negative set (issue 26): a calib-only set written by `-hardneg-extra`, with no
// test split, of benign text that talks about attacks. Its source is the manual pages and
// package documents of Debian bookworm's security and hardening tools (intrusion and rootkit
// detection, file integrity, mandatory access control and sandboxes, firewalls and log
// watchers, PAM, auditing, scanners, ModSecurity's module), picked by what they are, none of
// them in debian-extra: their prose and examples are full of attack words (sensitive paths,
// injection, passwords, traversal, sudo, rm -rf). Extraction, kinds, caps by salted hash and
// placement are the Debian set's (generateDebSet: EXAMPLES commands as shell, DESCRIPTION
// paragraphs as prose, pages and README/NEWS as doc_output), and a one-line paragraph that is a
// prompted command is a command too (option lists write "Example:", .br, "$ firejail --x"); every record is benign and marked
// hard_negative, by source. A line's first word names a command when it names a section 1 or 8
// page of this set or of debian-extra's packages (iptables, sudo, grep in a firewall tool's
// examples). A text any record of another held-out set holds is dropped without being written
// anywhere: COUNTS.md gives only the count.

// hardNegPackages are Debian bookworm packages fetched with `apt-get download Name=Version`;
// License is the License of its debian/copyright's "Files: *" paragraph (or its prose).
var hardNegPackages = []debPackage{
	{"fail2ban", "1.0.2-2", "GPL-2+"},
	{"lynis", "3.0.8-1.1", "GPL-3+"},
	{"aide", "0.18.3-1+deb12u5", "GPL-2+"},
	{"rkhunter", "1.4.6-11", "GPL-2+"},
	{"chkrootkit", "0.57-2+b9", "BSD-2-Clause"},
	{"apparmor", "3.0.8-3", "GPL-2+"},
	{"apparmor-utils", "3.0.8-3", "GPL-2+"},
	{"firejail", "0.9.72-2", "GPL-2+"},
	{"clamav", "1.4.6+dfsg-0+deb12u1", "GPL-2"},
	{"ufw", "0.36.2-1", "GPL-3"},
	{"logcheck", "1.4.2+deb12u1", "GPL-2.0"},
	{"auditd", "1:3.0.9-1", "GPL-2"},
	{"libpam-modules", "1.5.2-6+deb12u3", "BSD-3-clause or GPL"},
	{"libpam-runtime", "1.5.2-6+deb12u3", "BSD-3-clause or GPL"},
	{"libpam-pwquality", "1.4.5-1+b1", "libpwquality or GPL-2+"},
	{"nmap", "7.93+dfsg1-1", "nmap-GPL-2"},
	{"tiger", "1:3.2.4~rc1-3.2", "GPL-1+"},
	{"debsums", "3.0.2.1", "GPL"},
	{"needrestart", "3.6-4+deb12u4", "GPL-2"},
	{"unattended-upgrades", "2.9.1+nmu3", "GPL-2+"},
	{"libapache2-mod-security2", "2.9.7-1+deb12u2", "ASLv2"},
	{"libcap2-bin", "1:2.66-4+deb12u3+b1", "BSD-3-clause or GPL-2"},
	{"acl", "2.3.1-3", "GPL-2+"},
	{"sshguard", "2.4.2-1+b2", "ISC"},
	{"psad", "2.4.6-3", "GPL-2+"},
	{"knockd", "0.8-2+b4", "GPL-2"},
	{"selinux-utils", "3.4-1+b6", "public-domain"},
	{"policycoreutils", "3.4-1", "GPL-2"},
	{"ssh-audit", "2.5.0-1", "Expat"},
	{"tripwire", "2.4.3.7-4+b15", "GPL-2"},
}

// hardNegExtraCap caps each kind by the lowest salted hash (sample, as kindCap does).
var hardNegExtraCap = map[string]int{"shell": 800, "prose": 800, "doc_output": 300}

var hardNegExtraSet = debSet{Packages: hardNegPackages, CommandsToo: debianPackages, Cap: hardNegExtraCap,
	HardNegative: true, PromptedParas: true, NotCommand: hardNegNotCommand,
	Title: "# Extra hard-negative set (calib only): counts\n\nWritten by `make heldout-hardneg-extra`"}

// hardNegNotCommand matches the example lines whose first word names a command but which are
// not commands: a PAM configuration line ("su auth required pam_unix.so": service, management
// group, control, module), a sentence (a word, a full stop, a capitalised word, a full stop at
// the end, no shell operator), plain words only (three or more, commas at most: a "# " comment
// taken for a root prompt, "verify IP addresses"), a line that closes a parenthesis it did not
// open (prose cut from its paragraph) and a placeholder of several words ("<config file>").
var hardNegNotCommand = regexp.MustCompile(`^\S+\s+-?(auth|account|session|password)\s+\S+\s+\S*pam_\w+\.so\b` +
	`|^[^|;&<>$` + "`" + `]*\b[a-z]+\. [A-Z][a-z]+ [^|;&<>$` + "`" + `]*\.$` +
	`|^[A-Za-z]+(?:,? [A-Za-z]+){2,},?$` +
	`|^[^()]*\)$` +
	`|<[a-z]+(?: [a-z]+)+>`)

// hardNegOthers lists the JSONL files of every other held-out set under root: the Debian set's
// others, debian-extra and attacks-extra.
func hardNegOthers(root string) []string {
	out := debianOthers(root)
	for _, d := range []string{"debian-extra", "attacks-extra"} {
		out = append(out, must(filepath.Glob(filepath.Join(root, d, "*.jsonl")))...)
	}
	sort.Strings(out)
	return out
}

// generateHardNegExtra writes out/calib.jsonl and out/COUNTS.md from hardNegPackages, less
// the texts of the JSONL files in others, every record a hard negative.
func generateHardNegExtra(out, cache string, others []string, stdout io.Writer) error {
	return generateDebSet(out, cache, hardNegExtraSet, others, stdout)
}
