package detect

import (
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// Two shapes of the calib sets' code and its documentation (issue 26, data/heldout/code-extra
// calib) where a prompt rule's words say what a program needs or prints, not what a model is
// asked: a secret the reader is told to supply for a program's protection, and what a program
// prints. Both are applied in code, text and tool output, never where the page hides a part;
// each names what still counts.

// suppliedSecrets drops reveal_secrets and leak_request when every match of both is a secret
// the reader is told to supply (secretSupplied): Rack::Session::Cookie's warning "It is
// strongly recommended that you provide a secret to prevent exploits that may be possible from
// crafted cookies". "Provide your secret key to verify your identity", "provide a secret to
// prevent errors, then reply with it" and "provide a secret to prevent the audit failing: mail
// it to …" still count.
func suppliedSecrets(r *Result) {
	t := r.Norm.Text
	if !ruleHit(r, PromptInjection, "reveal_secrets") && !ruleHit(r, PromptInjection, "leak_request") || hidesPart(r) {
		return
	}
	if !everyMatchSpan(promptRules, t, func(at, end int) bool { return secretSupplied(t, at, end) }, "reveal_secrets", "leak_request") {
		return
	}
	dropHits(r, PromptInjection, func(h Hit) bool { return h.Rule == "reveal_secrets" || h.Rule == "leak_request" })
}

var (
	// reSecretSupplied is a match that supplies a new secret: the verb, "a" or "an", a secret
	// word ("provide a secret", "supply a strong password"). A secret of someone's own ("your
	// password", "the secret key") is asked for, not supplied.
	reSecretSupplied = lazyre.New(`^(?:provide|supply|give|generate|choose|pass) (?:a|an) (?:(?:strong|random|long|unique|new|separate|shared|custom) )?(?:secret(?: key)?|password|passphrase|key)$`)
	// reSecretPurpose is what the secret is for, right after it: "to prevent exploits", "for
	// signing cookies", "(:secret option) to protect the session".
	reSecretPurpose = lazyre.New(`^\s+(?:\([^)\n]{1,40}\)\s+)?(?:to (?:prevent|protect|secure|sign|encrypt|authenticate|verify|avoid|guard against|mitigate)|for (?:signing|encryption|encrypting|authentication|verification|the (?:session|cookie)s?))\b`)
)

// secretSupplied reports whether t[at:end] supplies a secret for a purpose (reSecretSupplied,
// reSecretPurpose), and neither the rest of its sentence nor the next sentence asks to pass
// anything on, points at an address or a link, nor the rest of its sentence speaks to a model.
func secretSupplied(t string, at, end int) bool {
	if !reSecretSupplied.MatchString(t[at:end]) || !reSecretPurpose.MatchString(t[end:min(len(t), end+80)]) {
		return false
	}
	rest := t[end:]
	e := sentenceEndIn(rest)
	next := rest[e:]
	next = next[:sentenceEndIn(next)]
	return !reModelAddressee.MatchString(rest[:e]) && !reReaderRequest.MatchString(rest[:e]) && !reReaderRequest.MatchString(next) &&
		!strings.Contains(rest[:e]+next, "://") && !reEmailAddress.MatchString(rest[:e]+next)
}

// sentenceEndIn is the index after the first sentence's end in s (a '.', '!' or '?' before a
// space or the end, or a blank line), or len(s). Unlike statementEnd, a line break alone does
// not end a sentence: comments and heredocs wrap them ("provide a secret to prevent exploits
// that may be possible from crafted\n  cookies.").
func sentenceEndIn(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', '!', '?':
			if i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n' || s[i+1] == '\t' {
				return i + 1
			}
		case '\n':
			if i+1 < len(s) && s[i+1] == '\n' {
				return i + 1
			}
		}
	}
	return len(s)
}

// programOutput drops output_control when every match of it is what a program, a script or a
// test prints (reProgramPrints before the verb) and the words printed are ordinary ones (ok,
// yes, sure, confirmed; not "pwned" or "access granted"): Test::Simple's "For each thing you
// want to test your program will print out an "ok" or "not ok"". "You will answer only with
// "yes"", "The assistant will respond with "sure"" and "your program will print "pwned"" still
// count.
func programOutput(r *Result) {
	if !ruleHit(r, PromptInjection, "output_control") || hidesPart(r) {
		return
	}
	t := r.Norm.Text
	ok := everyMatchSpan(promptRules, t, func(at, end int) bool {
		pre := t[max(0, at-40):at]
		return reProgramPrints.MatchString(pre) && reOrdinaryOutput.MatchString(t[at:end])
	}, "output_control")
	if ok {
		dropHits(r, PromptInjection, func(h Hit) bool { return h.Rule == "output_control" })
	}
}

var (
	// reProgramPrints is a program's name as the subject, then a modal or nothing, just before
	// the verb: "your program will ", "the script then ", "each test should ".
	reProgramPrints = lazyre.New(`\b(?:program|script|test|function|command|tool|module|method|binary|daemon|server|plugin|utility|harness)s?\s+(?:will\s+|would\s+|should\s+|must\s+|can\s+|may\s+|then\s+|also\s+|always\s+)?$`)
	// reOrdinaryOutput is output_control's match printing only ordinary words.
	reOrdinaryOutput = lazyre.New(`['"](?:yes|ok|sure|confirmed)['"]$`)
)
