package detect

import (
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// secretFormat is a credential whose value has a format its issuer documents: a prefix, a
// length and an alphabet that ordinary text does not produce. Source is that documentation.
type secretFormat struct {
	Name   string
	Hints  []string // literals one of which every match holds: the pattern runs only then
	Re     *lazyre.Regexp
	Source string
}

// secretFormats are the credentials recognised by value in an outgoing call's arguments
// (secretValues). Each pattern takes the documented prefix and at least the documented length;
// placeholders are told apart by the value itself (placeholderSecret).
var secretFormats = []secretFormat{
	{"a PEM private key", []string{"PRIVATE KEY"}, lazyre.New(`-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----\s*(?:[A-Za-z0-9+/=]{16,}\s*){4,}`),
		"https://www.rfc-editor.org/rfc/rfc7468#section-10"},
	{"a GitHub token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, lazyre.New(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b`),
		"https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/"},
	{"a GitLab token", []string{"glpat-"}, lazyre.New(`\bglpat-[A-Za-z0-9_-]{20,}`),
		"https://docs.gitlab.com/security/tokens/#token-prefixes"},
	{"an AWS secret access key", []string{"secret", "SECRET", "Secret"}, lazyre.New(`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+]{40}\b`),
		"https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html"},
	{"a Slack token", []string{"xox"}, lazyre.New(`\bxox[abposr]-[0-9]{8,13}-[0-9A-Za-z-]{20,}`),
		"https://docs.slack.dev/authentication/tokens"},
	{"a Stripe secret key", []string{"_live_"}, lazyre.New(`\b[sr]k_live_[A-Za-z0-9]{24,}`),
		"https://docs.stripe.com/keys"},
	{"an Anthropic API key", []string{"sk-ant-"}, lazyre.New(`\bsk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{80,}`),
		"https://docs.anthropic.com/en/api/overview#authentication"},
	{"an OpenAI API key", []string{"sk-"}, lazyre.New(`\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b`),
		"https://platform.openai.com/docs/api-reference/authentication"},
	{"an npm token", []string{"npm_"}, lazyre.New(`\bnpm_[A-Za-z0-9]{36}\b`),
		"https://github.blog/changelog/2021-09-23-npm-has-a-new-access-token-format/"},
}

// secretValue returns the first credential value in t (secretFormats) that is no placeholder,
// and what it is; "" when there is none.
func secretValue(t string) (match, what string) {
	if len(t) < 24 {
		return "", ""
	}
	for _, f := range secretFormats {
		if !hinted(t, f.Hints) {
			continue
		}
		for _, loc := range f.Re.FindAllStringIndex(t, 4) {
			if m := t[loc[0]:loc[1]]; !placeholderSecret(m) {
				return m, f.Name
			}
		}
	}
	return "", ""
}

// hinted reports whether t holds one of hints.
func hinted(t string, hints []string) bool {
	for _, h := range hints {
		if strings.Contains(t, h) {
			return true
		}
	}
	return false
}

// placeholderSecret reports whether a matched credential is a documentation placeholder, not a
// key: AWS's published example (…EXAMPLE…), a run of one character or a counting sequence
// (`ghp_xxxxxxxx…`, `ghp_1234567890abcdef…`), a value with fewer than 10 distinct characters in
// its random part, or one spelt out in a single case and no digit (`sk_live_yourkeyhere…`).
func placeholderSecret(m string) bool {
	if strings.Contains(strings.ToUpper(m), "EXAMPLE") {
		return true
	}
	// The random part: after the last separator of the prefix, or the PEM body.
	body := m
	if i := strings.Index(m, "-----\n"); i >= 0 && strings.HasPrefix(m, "-----BEGIN") {
		body = m[i+6:]
	} else if i := strings.LastIndexAny(m, "_-=:"); i >= 0 && len(m)-i > 16 {
		body = m[i+1:]
	}
	var seen [128]bool
	distinct, upper, lower, digit := 0, false, false, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c >= 128 {
			continue
		}
		if !seen[c] {
			seen[c] = true
			distinct++
		}
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	if distinct < 10 {
		return true
	}
	if strings.Contains(body, "0123456789") || strings.Contains(strings.ToLower(body), "abcdef") && strings.Contains(body, "123456") {
		return true
	}
	return !digit && (!upper || !lower)
}

// secretValues asks about an outgoing call whose argument holds a credential's value (issue
// 26): a private key or a live token in a message, an issue, a page or a command sent to a
// tool leaves the machine with it. A careful reviewer asks, not refuses: a secret manager's,
// a CI settings' or a login tool's call carries one on purpose (a bundle's exclusion can name
// such a tool). Only the request phase of a tools/call; what a tool returns is not sent.
func secretValues(r *Result, d *Detector, t string) {
	if m, what := secretValue(t); m != "" {
		// The match names what it is, never the value: evidence and the audit record keep it.
		voteHit(r, d, Hit{Category: SensitivePaths, Rule: "secret_value", Weight: 0.9, Match: what, Uncertain: true})
	}
}
