package detect

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

//go:generate go test -run ^(TestGeneratedTables|TestSearchTables)$ -update .

// rule is one weighted pattern. Its regexp runs only when the prefilter (see prefilter.go)
// found one of the literals every match must contain; pre lists fallback literals for the
// few regexps whose literals cannot be derived. The regexp is compiled on first use, so an
// instance pays at start-up for no regexp and later only for the rules its texts select.
type rule struct {
	id    int
	group int // id of the first part of the rule this one was split from
	cat   Category
	name  string
	w     float64
	pre   []string
	expr  string
	re    func() *regexp.Regexp // compiles expr once, on first call
	tail  []*rule               // table rules: this rule and the ones after it, as run
	// find, when set, finds a match of expr in another way (same matches, cheaper); the
	// prefilter still derives from expr.
	find func(t string) []int
	// win matches long texts by windows around its anchor's literals (window.go); nil when the
	// regexp has no anchor.
	win *windowed
	// bar: the ASCII bytes no match holds (genBarriers; segment.go); zero when the rule's
	// clauses do not come from its regexp.
	bar barriers
	// after is \A(?s:.)(?s:.*?)(expr), compiled on first use: the leftmost match after a
	// context rune (searchFrom, allmatch.go).
	after func() *regexp.Regexp
}

// findIndex is the regexp's FindStringIndex (sub: FindStringSubmatchIndex), by windows or
// segments (segment.go) when that is cheaper.
func (ru *rule) findIndex(v *voter, t string, sub bool) []int {
	if len(t) >= windowMin {
		if ru.win != nil {
			if loc, ok := ru.win.find(t, sub, v.validUTF8(t)); ok {
				return loc
			}
		}
		if lits := ru.segmentLits(); lits != nil {
			return segmentFind(ru.re(), &ru.bar, lits, t, sub)
		}
	}
	if sub {
		return ru.re().FindStringSubmatchIndex(t)
	}
	return ru.re().FindStringIndex(t)
}

// lazyRegexp returns a function that compiles expr on its first call and then returns the
// same regexp.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

func r(c Category, name string, w float64, pre string, expr string) rule {
	var p []string
	if pre != "" {
		p = strings.Split(pre, "|")
	}
	return rule{cat: c, name: name, w: w, pre: p, expr: expr, re: lazyRegexp(expr)}
}

// gate is a regexp used outside the rule tables, behind the same prefilter.
type gate struct {
	rule
	alts func() []*regexp.Regexp // the regexp's top-level alternatives (alternatives)
}

var gates []*gate

func newGate(expr string) *gate {
	g := &gate{rule: rule{cat: -1, expr: expr, re: lazyRegexp(expr)}, alts: alternatives(expr)}
	gates = append(gates, g)
	return g
}

// FindStringIndex is regexp's, skipped when the prefilter rules the match out. On a long text
// a gate with no window anchor is searched by its alternatives (firstAlternative): reSecretName's
// ~80 names stepped Go's NFA over every byte of a 20 KiB Markdown page with relative links
// (`../`), 28 ms natively and past the injection stage's 250 ms in a loaded guest; one
// alternative at a time most start with a literal Go's regexp jumps to.
func (g *gate) find(v *voter, t string) []int {
	if !v.cand[g.id] {
		return nil
	}
	if g.win == nil && g.alts != nil && len(t) >= windowMin {
		if alts := g.alts(); alts != nil {
			return firstAlternative(alts, t)
		}
	}
	return g.findIndex(v, t, false)
}

// alternatives compiles each top-level alternative of expr alone; nil when expr is not an
// alternation.
func alternatives(expr string) func() []*regexp.Regexp {
	return sync.OnceValue(func() []*regexp.Regexp {
		re, err := syntax.Parse(expr, syntax.Perl)
		if err != nil || re.Op != syntax.OpAlternate {
			return nil
		}
		out := make([]*regexp.Regexp, len(re.Sub))
		for i, sub := range re.Sub {
			out[i] = regexp.MustCompile(sub.String())
		}
		return out
	})
}

// firstAlternative is the whole alternation's FindStringIndex from its alternatives' (in
// order): the leftmost-first match is the earliest start among theirs, and at one start the
// first alternative that matches there wins, with the end it prefers. TestFirstAlternative and
// FuzzFirstAlternative hold it to the whole regexp.
func firstAlternative(alts []*regexp.Regexp, t string) []int {
	var loc []int
	for _, re := range alts {
		if l := re.FindStringIndex(t); l != nil && (loc == nil || l[0] < loc[0]) {
			loc = l
		}
	}
	return loc
}

func (g *gate) match(v *voter, t string) bool { return g.find(v, t) != nil }

func (g *gate) findAll(v *voter, t string, n int) [][]int {
	if !v.cand[g.id] {
		return nil
	}
	return g.re().FindAllStringSubmatchIndex(t, n)
}

func (g *gate) findSub(v *voter, t string) []int {
	if !v.cand[g.id] {
		return nil
	}
	return g.findIndex(v, t, true)
}

func (ru *rule) apply(v *voter, t string) bool {
	if !v.cand[ru.id] || v.voted[ru.group] || v.done(ru.cat) {
		return false
	}
	var loc []int
	if ru.find != nil {
		loc = ru.find(t)
	} else {
		loc = ru.findIndex(v, t, false)
	}
	if loc == nil {
		return false
	}
	v.voted[ru.group] = true
	v.add(ru.cat, ru.name, ru.w, snippet(t, loc))
	return true
}

// applyAll runs a rule table, or a sub-slice of one (promptRules[1:]), as expanded at init: a
// rule whose regexp is a top-level alternation runs as one rule per branch, so each branch
// gets its own, more selective prefilter. Branches of one rule vote once.
func applyAll(v *voter, rules []rule, t string) {
	if len(rules) == 0 {
		return
	}
	if rules[0].tail == nil {
		panic("detect: applyAll on a slice that is not a registered rule table")
	}
	// A table's rules have consecutive ids in the order they run (init), so the candidate
	// flags of the tail are one run of v.cand: reading those bytes, rather than calling apply
	// on every rule of the table, keeps a scan of a short text from touching ~600 rule
	// structs (issue 27: most of the injection guest's time on the served echo call).
	tail := rules[0].tail
	first := tail[0].id
	if v.candsOK {
		// The few candidates, in id order: the same rules in the same order as the flags.
		for _, id := range v.cands {
			if i := int(id) - first; i >= len(tail) {
				break
			} else if i >= 0 {
				tail[i].apply(v, t)
			}
		}
		return
	}
	// Many candidates (a long text): every flag of the table, in order.
	for i, ok := range v.cand[first : first+len(tail)] {
		if ok {
			tail[i].apply(v, t)
		}
	}
}

// ruleTables lists the rule tables in the order init numbers their rules; the generated
// prefilter tables (tables_gen.go) follow the same order, then the gates.
var ruleTables = []*[]rule{&sensitiveRules, &configRules, &traversalRules, &sqlRules, &commandRules, &xssRules, &promptRules}

// unsplit reports whether table rule i must run whole: the first prompt rule is also used as
// a gate by scanPrompt.
func unsplit(table *[]rule, i int) bool { return i == 0 && table == &promptRules }

var (
	allRules    []*rule
	ruleClauses [][]int32 // rule id -> its clause ids (all must be present); nil = always runs
	clauseRules []int32   // clause id -> the rule that needs it
	numClauses  int
	always      []int
	index       gramIndex
	// tablesStale is set when tables_gen.go does not match the rules (run go generate).
	tablesStale bool
)

// init numbers the rules and loads the prefilter from tables_gen.go, which go generate
// derives from the regexps' syntax trees (see prefilter_gen_test.go): doing that here cost a
// fresh Wasm instance seconds of start-up. No regexp is compiled here.
func init() {
	if rulesFingerprint() != genFingerprint || len(genSplit) != numTableRules() {
		tablesStale = true
		return
	}
	k := 0
	for _, table := range ruleTables {
		var xs []*rule
		for i := range *table {
			ru := &(*table)[i]
			branches := genSplit[k]
			k++
			ru.id = len(allRules)
			ru.group = ru.id
			if branches != nil && ru.find != nil {
				panic("detect: rule " + ru.name + " has its own matcher and cannot be split")
			}
			if branches == nil {
				allRules = append(allRules, ru)
				xs = append(xs, ru)
				continue
			}
			for _, b := range branches {
				part := &rule{id: len(allRules), group: ru.group, cat: ru.cat, name: ru.name, w: ru.w, expr: b, re: lazyRegexp(b)}
				allRules = append(allRules, part)
				xs = append(xs, part)
			}
		}
		j := 0
		for i := range *table {
			for xs[j].group < (*table)[i].id {
				j++
			}
			(*table)[i].tail = xs[j:]
		}
		for j, ru := range xs {
			if ru.id != xs[0].id+j {
				panic("detect: rule " + ru.name + ": a table's rules do not have consecutive ids")
			}
		}
	}
	for _, g := range gates {
		g.id = len(allRules)
		g.group = g.id
		allRules = append(allRules, &g.rule)
	}
	if len(allRules) != len(genRuleClauses) || len(genLitKey) != len(genLits) || len(genAnchors) != len(allRules) || len(genBarriers) != len(allRules) {
		tablesStale = true
		return
	}
	for id, ru := range allRules {
		ru.win = newWindowed(genAnchors[id], ru.expr)
		ru.bar = genBarriers[id]
		ru.after = fromRegexp(ru.expr)
	}
	ruleClauses = genRuleClauses
	clauseRules = genClauseRule
	numClauses = len(genClauseRule)
	for id, cs := range ruleClauses {
		if cs == nil {
			always = append(always, id)
		}
	}
	index.build(genLits, genLitClauses, genLitKey)
}

func numTableRules() int {
	n := 0
	for _, t := range ruleTables {
		n += len(*t)
	}
	return n
}

// rulesFingerprint is an FNV-1a hash of every table rule's regexp and fallback literals and
// every gate's regexp, in order: it tells init whether tables_gen.go is current.
func rulesFingerprint() uint64 {
	h := uint64(14695981039346656037)
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	for _, t := range ruleTables {
		for i := range *t {
			add((*t)[i].expr)
			for _, p := range (*t)[i].pre {
				add(p)
			}
		}
	}
	for _, g := range gates {
		add(g.expr)
	}
	return h
}

// candidates marks the rules whose regexps may match t (or t with backslashes as slashes).
//
// The result's second half is scratch space for the voter's per-group "voted" flags.
func candidates(t string) []bool {
	return candidatesInto(t, make([]bool, scratchLen()), make([]uint8, len(allRules)))
}

func scratchLen() int { return 2*len(allRules) + numClauses + len(index.lits) }

// scratch is the per-scan working memory of candidatesInto, pooled: zeroing a few KiB per
// string leaf is most of the cost of scanning a short one.
type scratch struct {
	buf   []bool
	count []uint8
	// lits lists the literals the last scan found, so reset clears only the flags they set;
	// over is set when there were more than lits holds (reset then clears everything).
	lits []int32
	over bool
	// cands lists the candidate rules in id order when there are at most maxTracked of them
	// (candsOK), so applyAll visits them instead of every rule's flag.
	cands     []int32
	candsOK   bool
	flagsOnly bool // tests: never list the candidates (the path of texts that select many rules)
}

// maxTracked is how many found literals a scratch remembers: a short text finds a few.
const maxTracked = 64

var scratchPool = sync.Pool{New: func() any {
	return &scratch{buf: make([]bool, scratchLen()), count: make([]uint8, len(allRules)),
		lits: make([]int32, 0, maxTracked), cands: make([]int32, 0, maxTracked)}
}}

// candidates is candidatesInto on the scratch's memory, remembering what it sets for reset
// and, when they are few, the candidate rules in id order.
func (sc *scratch) candidates(t string) []bool {
	sc.candsOK = !sc.flagsOnly
	cand := candidatesTrack(t, sc.buf, sc.count, sc)
	if sc.candsOK {
		slices.Sort(sc.cands)
	}
	return cand
}

// candidate notes that rule r became a candidate.
func (sc *scratch) candidate(r int32) {
	if len(sc.cands) < cap(sc.cands) {
		sc.cands = append(sc.cands, r)
	} else {
		sc.candsOK = false
	}
}

// reset zeroes what candidates and the voter set: the flags of the literals found, of their
// clauses, rules and rule groups, and of the rules that always run (a rule votes, setting its
// group's flag, only when it is a candidate, and is a candidate only when it always runs or
// one of its clauses was found). Beyond maxTracked literals it clears everything, as before
// issue 27, where this cut a short text's scan by a twentieth.
func (sc *scratch) reset() {
	if sc.over {
		clear(sc.buf)
		clear(sc.count)
	} else {
		n := len(allRules)
		cand, voted, present, seen := sc.buf[:n], sc.buf[n:2*n], sc.buf[2*n:2*n+numClauses], sc.buf[2*n+numClauses:]
		for _, id := range always {
			cand[id], voted[allRules[id].group] = false, false
		}
		for _, lit := range sc.lits {
			seen[lit] = false
			for _, c := range index.rules[lit] {
				present[c] = false
				r := clauseRules[c]
				sc.count[r] = 0
				cand[r], voted[allRules[r].group] = false, false
			}
		}
	}
	sc.lits, sc.over = sc.lits[:0], false
	sc.cands, sc.candsOK = sc.cands[:0], false
}

// candidatesInto is candidates with caller-provided, zeroed memory.
func candidatesInto(t string, buf []bool, count []uint8) []bool {
	return candidatesTrack(t, buf, count, nil)
}

// candidatesTrack is candidatesInto that, given a scratch, notes the literals found in it.
func candidatesTrack(t string, buf []bool, count []uint8, sc *scratch) []bool {
	if tablesStale {
		panic("detect: tables_gen.go is out of date with the rules: run go generate ./plugins/injection/detect")
	}
	n := len(allRules)
	cand, present, seen := buf[:2*n], buf[2*n:2*n+numClauses], buf[2*n+numClauses:]
	for _, id := range always {
		cand[id] = true
		if sc != nil {
			sc.candidate(int32(id))
		}
	}
	found := func(lit int32) {
		if sc != nil {
			if len(sc.lits) < cap(sc.lits) {
				sc.lits = append(sc.lits, lit)
			} else {
				sc.over = true
			}
		}
		for _, c := range index.rules[lit] {
			if present[c] {
				continue
			}
			present[c] = true
			r := clauseRules[c]
			count[r]++
			if int(count[r]) == len(ruleClauses[r]) {
				cand[r] = true
				if sc != nil {
					sc.candidate(r)
				}
			}
		}
	}
	index.scan(t, seen, found)
	if strings.IndexByte(t, '\\') >= 0 {
		index.scan(strings.ReplaceAll(t, `\`, "/"), seen, found)
	}
	return cand
}

// ---------------------------------------------------------------- sensitive files

// Shared by traversal (a traversal that reaches one of these is an attack) and sensitive paths.
const secretNames = `(?:id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?|authorized_keys|known_hosts|\.ssh/|` +
	`\.aws/(?:credentials|config)|\.kube/config|\.docker/config\.json|\.npmrc|\.pypirc|\.netrc|_netrc|\.pgpass|` +
	`\.git-credentials|\.git/(?:config|head|index)|\.gitconfig|\.htpasswd|\.htaccess|\.bash_history|\.zsh_history|\.mysql_history|\.psql_history|` +
	`\.bashrc|\.bash_profile|\.profile|\.viminfo|\.vault-token|\.terraformrc|terraform\.tfstate|` +
	`(?:^|/)\.env(?:\.[a-z]+)?$|(?:^|/)\.env(?:\.[a-z]+)?[/?#\s]|` +
	`/(?:shadow|passwd|master\.passwd|gshadow|sudoers|group|security/opasswd)(?:$|[\s;'"?#~-]|\.bak)|^(?:shadow|passwd|master\.passwd|gshadow|sudoers|group|security/opasswd)(?:$|[;'"?#~-]|\.bak)|` +
	`(?:^|/)\.(?:rhosts|shosts|cshrc|tcshrc|forward|xauthority|logout|login|passwd|pass|my\.cnf|boto|s3cfg|dockercfg|lesshst|mozilla|gnupg|password-store|config/gh/hosts\.yml)(?:$|/)|ntuser\.dat|` +
	`web\.config|wp-config\.(?:php|inc|bak|old|orig|save|txt)|configuration\.php|localsettings\.php|settings\.php|config\.inc\.php|config\.php|` +
	`credentials\.(?:json|db|ya?ml|xml|ini|txt|csv)|access_tokens\.db|application_default_credentials\.json|accesstokens\.json|azureprofile\.json|` +
	`service-?account[^/]*\.json|serviceaccount/token|secrets?\.ya?ml|secrets?\.json|` +
	`\.(?:pem|ppk|p12|pfx|jks|keystore|kdbx|key)$|` +
	`boot\.ini|win\.ini|system\.ini|` +
	`proc/self/|proc/\d+/|/environ(?:$|[^a-z])|/cmdline|system32/config/|repair/sam|unattend(?:ed)?\.xml|sysprep\.inf|` +
	`(?:^|/)(?:var/)?run/secrets/|` +
	// issue 26, third round: browser, keychain, GnuPG and Kerberos stores (public docs of
	// Chrome, macOS, GnuPG, MIT Kerberos; none in calib, probed by hand). A GnuPG ring counts
	// in a home folder or the root (~/.gnupg is a secret folder already): a project's
	// testdata/gnupg holds test keys (data/heldout/wide calib, goreleaser).
	`/(?:default|profile \d+)/(?:login data|cookies|web data)(?:-journal)?$|library/keychains/|\.keychain(?:-db)?$|` +
	`^(?:~|/home/[^/]+|/root)?/secring\.gpg$|krb5cc_|\.keytab$|/run/user/\d+/(?:keyring|gnupg)/|` +
	// det72: an SSH server's private host key (sshd(8), FILES), wherever it is copied.
	`ssh_host_[a-z0-9]+_key$)`

// serverConfigs are configuration files of system services: sensitive on a server, ordinary
// inside a project checkout (deploy/etc/nginx.conf), so they weigh less and projects are exempt.
const serverConfigs = `(?:php\.ini|my\.cnf|my\.ini|httpd\.conf|apache2?\.conf|nginx\.conf|lighttpd\.conf|` +
	`(?:access|error)[._]log|httpd-(?:access|error)\.log|proftpd\.conf|vsftpd\.conf|smb\.conf|sshd_config|ssh_config|` +
	`tomcat-users\.xml|server\.xml|php-fpm\.conf|pg_hba\.conf|postgresql\.conf|redis\.conf|mongod\.conf|` +
	`(?:^|/)(?:hosts|fstab|crontab|issue|motd|resolv\.conf|inittab|exports|inetd\.conf|syslog\.conf|rsyslog\.conf|logrotate\.conf)$)`

var reServerConfig = newGate(serverConfigs)

// projectPath marks paths inside a project checkout: relative, or under a projects or
// source folder.
// Written by hand: as a regexp its unanchored branch cost a pass over every text.
func projectPath(t string) bool {
	if strings.HasPrefix(t, "./") {
		return true
	}
	i := 0
	for i < len(t) && (t[i] >= 'a' && t[i] <= 'z' || t[i] >= '0' && t[i] <= '9' || t[i] == '_' || t[i] == '-') {
		i++
	}
	if i > 0 && i < len(t) && t[i] == '/' {
		return true
	}
	for _, d := range projectDirs {
		if strings.Contains(t, d) {
			return true
		}
	}
	return false
}

// keyExts are the key and certificate extensions secretNames flags on their own.
var keyExts = []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore"}

// fixtureDirs are folders that hold a project's test material.
var fixtureDirs = []string{"/test/", "/tests/", "/testdata/", "/testing/", "/fixtures/", "/fixture/", "/_fixture/", "/__fixtures__/", "/__tests__/"}

// fixtureKeyExt returns the key extension ending t when t is a single path inside a project
// checkout (projectPath) under a test-fixture folder, not under a system or home dot-folder;
// else "".
func fixtureKeyExt(t string) string {
	// The extension first: most texts end in none, and the other tests read the whole text.
	ext := ""
	for _, e := range keyExts {
		if strings.HasSuffix(t, e) {
			ext = e
			break
		}
	}
	if ext == "" {
		return ""
	}
	if strings.ContainsAny(t, " \t\n;|&$`'\"") || strings.Contains(t, "/.") || !projectPath(t) {
		return ""
	}
	p := "/" + t
	for _, d := range fixtureDirs {
		if strings.Contains(p, d) {
			return ext
		}
	}
	return ""
}

// publicPEM reports whether t is a single path to a .pem file whose name says it holds a
// certificate, a chain or a public key (server-cert.pem, fullchain.pem, ca.pem,
// ed25519-public.pem) and nothing private (privkey.pem, server-key.pem, keypair.pem): what
// a TLS server sends every client is not a secret.
func publicPEM(t string) bool {
	if !strings.HasSuffix(t, ".pem") || strings.ContainsAny(t, " \t\n;|&$`'\"") {
		return false
	}
	name := strings.TrimSuffix(t[strings.LastIndexByte(t, '/')+1:], ".pem")
	for _, w := range []string{"key", "priv", "secret", "pass", "token", "cred"} {
		if strings.Contains(name, w) {
			return false
		}
	}
	if name == "ca" || strings.HasPrefix(name, "ca-") || strings.HasPrefix(name, "ca_") || strings.HasSuffix(name, "-ca") || strings.HasSuffix(name, "_ca") {
		return true
	}
	for _, w := range []string{"cert", "chain", "bundle", "public", "pubkey"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

var projectDirs = []string{"/projects/", "/repos/", "/src/", "/workspace/", "/code/", "/git/", "/dev/"}

// reHarmlessSystem lists system files that are read for ordinary diagnostics.
var reHarmlessSystem = newGate(`^(?:cat\s+|less\s+|head\s+)?/etc/(?:os-release|lsb-release|debian_version|timezone|localtime|redhat-release|alpine-release)$`)

var reSecretName = newGate(secretNames)

const systemDirs = `(?:^|[\s'"=:(]|file://)(?:[a-z]:)?/+(?:etc|proc|sys|root|boot|dev|` +
	`var/(?:log|www|lib|mail|spool|run|db|cache|backups|opt|apache2?|nginx|tmp|adm|lib/mysql)|` +
	`usr/(?:local/)?(?:etc|apache2?|nginx|lib/php|share/nginx|pkg|local/apache)|opt/(?:lampp|xampp|bitnami)|` +
	`private/(?:etc|var)|library/(?:keychains|preferences)|` +
	`windows|winnt|inetpub|xampp|wamp|program files(?: \(x86\))?|programdata|documents and settings|` +
	`users/[^/]+/(?:appdata|ntuser|\.)|home/[^/]+/\.|root/|apache|mysql|php\d?|tomcat)` + `(?:/|$|\s)`

var sensitiveRules = []rule{
	r(SensitivePaths, "secret_file", 0.85, "", secretNames),
	r(SensitivePaths, "system_dir", 0.8, "/", systemDirs),
	r(SensitivePaths, "home_dotfile", 0.8, "~|$home|%userprofile%|home", `(?:~|\$home|%userprofile%|/home/[^/\s]+|/users/[^/\s]+)/+\.[a-z0-9]`),
	// A file straight in a home folder or the root whose name says it holds a secret: a key
	// (otr.private_key), a credential, a password, a token, a wallet, an OAuth grant, Terraform
	// state, Rails' database.yml or secret_token.rb, a history (issue 26; the names of
	// gitrob's signatures, npm ban-sensitive-files, data/heldout/paths-extra). Only there:
	// a project's credentials.go or secret_test.go is code. The value is the path (anchored:
	// a long text is not scanned for it).
	r(SensitivePaths, "home_secret_name", 0.85, "secret|private|privkey|credential|passw|wallet|token|oauth|tfstate|database.y|history|keystore",
		`^(?:~|\$home|/home/[^/\s]+|/users/[^/\s]+|/root)?/[^/\s]*(?:secret|private|privkey|credential|passw(?:or)?d|wallet|token|oauth|\.tfstate|database\.ya?ml|history|keystore)[^/\s]*$|^/(?:[^/\s]+/)?config/(?:database|secrets|credentials)\.ya?ml$`),
	// A folder named for a secret store straight under the root or a home folder: a web
	// root's /passwords/, /secrets/, /credentials/gcloud.json, /_private/, a WP Engine
	// /_wpeprivate/, /htpasswd/, ~/secrets/ (issue 26, dirsearch's dicc.txt in
	// data/heldout/fresh-attacks). Only there, and only as a whole folder name: a project's
	// internal/secrets/ or cli/config/credentials/ is code, /usr/share/doc/passwd/ a package's
	// documentation (data/heldout calib, wide, debian-extra benign paths).
	r(SensitivePaths, "secret_store_dir", 0.85, "passw|secret|credentials|_private|_wpeprivate|htpasswd",
		`^(?:~|\$home|/home/[^/\s]+|/users/[^/\s]+|/root)?/(?:passw(?:or)?ds?|passw(?:or)?ds?_files|passw(?:or)?dlists?|secrets?|credentials|_private|_wpeprivate|htpasswd)/[^\s]*$`),
	r(SensitivePaths, "env_var_path", 0.7, "%", `%(?:systemroot|windir|userprofile|appdata|localappdata|programdata|allusersprofile|homepath|systemdrive)%`),
}

var configRules = []rule{
	r(SensitivePaths, "server_config", 0.6, "", serverConfigs),
	r(SensitivePaths, "log_dir", 0.45, "log", `/logs?/?$`),
	r(SensitivePaths, "config_ext", 0.45, ".|_log", `\.(?:conf|cnf|cfg|ini|log|bak|old|orig|swp|sav|save|db|db3|sqlite3?|mdb|sql|kdb|xml)(?:\.(?:gz|bz2|xz|zst|zip|7z))?(?:$|[\s?#;'"]|~)|_log$`),
}

// drivePath finds a Windows drive path (c:/ after start, space, quote or '='): written by hand
// because ":/" occurs in every URL and the regexp would then scan the whole text.
func drivePath(t string) string {
	for i := 1; i+1 < len(t); i++ {
		if t[i] != ':' || t[i+1] != '/' {
			continue
		}
		c := t[i-1]
		if c < 'a' || c > 'z' {
			continue
		}
		if i >= 2 {
			p := t[i-2]
			if p != ' ' && p != '\'' && p != '"' && p != '=' && p != '\n' {
				continue
			}
		}
		return t[i-1 : min(len(t), i+40)]
	}
	return ""
}

// absoluteSystemPath returns t when the whole text is one absolute path (/x, ~/x, c:/x) outside
// a home project folder or /tmp: on its own weak, it tips a config or log file name over.
func absoluteSystemPath(t string) string {
	if len(t) < 2 {
		return ""
	}
	abs := t[0] == '/' || t[0] == '~' || len(t) > 2 && t[1] == ':' && t[2] == '/' && t[0] >= 'a' && t[0] <= 'z'
	if !abs || strings.ContainsAny(t, " \n") || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/tmp/") || strings.Contains(t, "/projects/") ||
		strings.Contains(t, "/src/") || strings.Contains(t, "/repos/") || strings.Contains(t, "/workspace/") {
		return ""
	}
	return t
}

// credentialConfig returns t when it is a single absolute path outside a project checkout to
// an application configuration file known to hold credentials: Rails' database.yml with any
// backup or variant suffix (database.yml~, database.yml_original, database.yml.pgsql) and
// Rails' config/initializers/secret_token.rb anywhere below the root, and a file named private
// in a folder named private (NetBeans' nbproject/private/private.properties) (issue 26,
// data/heldout/fresh-attacks). A template (database.yml.example, .sample, .dist) holds no
// credentials, and in a project checkout these are the project's own files (reading
// config/database.yml is ordinary development): both pass.
func credentialConfig(t string) string {
	if len(t) < 2 || t[0] != '/' || strings.ContainsAny(t, " \t\n;|&$`'\"") || projectPath(t) {
		return ""
	}
	i := strings.LastIndexByte(t, '/')
	dir, name := t[:i+1], t[i+1:]
	switch {
	case strings.HasPrefix(name, "database.yml") || strings.HasPrefix(name, "database.yaml"):
		rest := strings.TrimPrefix(strings.TrimPrefix(name, "database.yaml"), "database.yml")
		if rest != "" && !strings.ContainsRune("~._-", rune(rest[0])) {
			return ""
		}
		for _, w := range []string{"example", "sample", "dist", "template", "tmpl", "default"} {
			if strings.Contains(rest, w) {
				return ""
			}
		}
	case name == "secret_token.rb" && strings.HasSuffix(dir, "/config/initializers/"):
	case strings.HasSuffix(dir, "/private/") && strings.Contains(name, "private") && strings.HasSuffix(name, ".properties"):
	default:
		return ""
	}
	return t
}

// pagePasswordExts are the extensions of a web page or script: a page named for a password
// (session_password.html, change_password.php) is a form more often than a store.
var pagePasswordExts = []string{".html", ".htm", ".php", ".asp", ".aspx", ".jsp", ".cgi"}

// sourceExts are source code: a file so named is code whatever its name says.
var sourceExts = []string{".go", ".py", ".js", ".ts", ".rs", ".java", ".c", ".h", ".rb", ".kt", ".swift", ".cs"}

// passwordFile returns the rule for a single absolute path one folder below the root, outside
// a project checkout, whose file name says it holds passwords (/wwwboard/passwd.txt,
// /servlet/aphtpassword; issue 26, data/heldout/fresh-attacks): "password_file", or
// "password_page" when the name is a web page or script (/+cscoe+/session_password.html:
// a form as likely as a store, asked by passwordPage); "" otherwise, and for source code
// (/lib/password.go). Deeper paths are a project's or a system's files
// (/home/dev/src/pgx/pgproto3/password_message.go) and judged as before.
func passwordFile(t string) string {
	if len(t) < 4 || t[0] != '/' || strings.ContainsAny(t, " \t\n;|&$`'\"") || projectPath(t) || strings.Count(t, "/") != 2 {
		return ""
	}
	name := t[strings.LastIndexByte(t, '/')+1:]
	if !strings.Contains(name, "passwd") && !strings.Contains(name, "password") {
		return ""
	}
	for _, e := range sourceExts {
		if strings.HasSuffix(name, e) {
			return ""
		}
	}
	for _, e := range pagePasswordExts {
		if strings.HasSuffix(name, e) {
			return "password_page"
		}
	}
	return "password_file"
}

// osTopDirs are the folders straight under the root that an operating system makes (the
// FHS's, macOS's, Nix's and Guix's): a path below one of them is the system's, a package's
// or a home folder's, judged by the rules above. Any other top folder (/admin/, /cgi-bin/,
// /_vti_pvt/, /scripts/) is a site's or a share's, where siteSecret reads every step.
var osTopDirs = map[string]bool{"bin": true, "boot": true, "dev": true, "etc": true, "home": true, "lib": true,
	"lib32": true, "lib64": true, "libx32": true, "media": true, "mnt": true, "opt": true, "proc": true, "root": true,
	"run": true, "sbin": true, "srv": true, "sys": true, "tmp": true, "usr": true, "var": true, "snap": true,
	"nix": true, "gnu": true, "users": true, "library": true, "system": true, "applications": true, "volumes": true,
	"private": true, "cores": true, "net": true, "network": true, "afs": true}

// secretStoreFolder: a folder named for a store of secrets (passwords, secrets, credentials,
// private, keystores, wallets, tokens, htpasswd; a leading underscore or dot kept:
// /_private/), or the metadata folder of a version control system or an editor, which holds
// the site's source, its history and often a deploy password (.git, .svn, .hg, .bzr, CVS,
// _darcs, .idea, .vscode, Delphi's __history, VS Code's .history).
var secretStoreFolder = lazyre.New(`^(?:[._]*(?:passw(?:or)?ds?(?:_files|lists?)?|secrets?|credentials?|private|keystores?|wallets?|tokens?|htpasswd)|\.(?:git|svn|hg|bzr|idea|vscode|history)|cvs|_darcs|__history)$`)

// secretFileName: a file named for a secret: a password (or FrontPage's .pwd, an htpasswd or
// htdigest file), a secret, a credential, a private key or a file named private, a keystore, a
// wallet, tokens, a log of logins or commands (login_history, .sh_history, .history).
var secretFileName = lazyre.New(`passw(?:or)?d|\.pwd$|htpasswd|htdigest|secret|credential|(?:^|[._-])priv(?:ate|key)(?:$|[._-])|keystore|wallet|(?:^|[._-])tokens?(?:$|[._-])|(?:^\.|_)history(?:$|\.)`)

// docExts are documents: a text about passwords or secrets is read, not a store.
var docExts = []string{".md", ".rst", ".adoc", ".pdf"}

// pageDataExts are web pages and exported tables: one named for a secret other than a
// password (history.html, history.csv, tokens.php) is a page or a report, not a store.
var pageDataExts = slices.Concat(pagePasswordExts, []string{".csv", ".swf", ".js", ".css"})

// siteSecret returns the rule for a single absolute path below a top folder that is not the
// operating system's (osTopDirs), outside a project checkout, that names a secret store at
// any depth (issue 26, det58, data/heldout/fresh-attacks: wfuzz's and wapiti's lists widen
// dirsearch's calib): "secret_store_dir" when a folder is named for a secret store or is a
// version control or editor metadata folder (/admin/credentials/, /scripts/.svn/entries,
// /__history/); for its file, "password_file" or "password_page" as passwordFile says
// (/cgi-bin/webadmin/passwords/list.txt; /scripts/c32web.exe/changeadminpassword is a
// password_file, /admin/users/change_password.php asked), or "site_secret_name" for any
// other secret name (/admin/tokens.txt, /login/login_history, /_vti_pvt/service.pwd). A
// path with source code or a document in it (.go, .md, .html) passes, so does a test
// fixture's, and the root-level name is the rules' above (home_secret_name).
func siteSecret(t string) string {
	if len(t) < 4 || t[0] != '/' || strings.ContainsAny(t, " \t\n;|&$`'\"*?") || projectPath(t) || strings.Count(t, "/") < 2 {
		return ""
	}
	segs := strings.Split(t[1:], "/")
	if osTopDirs[segs[0]] || strings.Contains(t, "://") {
		return ""
	}
	p := t + "/"
	for _, d := range fixtureDirs {
		if strings.Contains(p, d) {
			return ""
		}
	}
	name := segs[len(segs)-1]
	for _, e := range slices.Concat(sourceExts, docExts) {
		if strings.HasSuffix(name, e) {
			return ""
		}
	}
	for _, f := range segs[:len(segs)-1] {
		if secretStoreFolder.MatchString(f) {
			return "secret_store_dir"
		}
	}
	if strings.Contains(name, "passwd") || strings.Contains(name, "password") {
		for _, e := range pagePasswordExts {
			if strings.HasSuffix(name, e) {
				return "password_page"
			}
		}
		return "password_file"
	}
	for _, e := range pageDataExts {
		if strings.HasSuffix(name, e) {
			return ""
		}
	}
	if secretFileName.MatchString(name) {
		return "site_secret_name"
	}
	return ""
}

// scanSensitive applies the sensitive-file rules to the text with backslashes as slashes.
// Server configuration names count only outside project checkouts.
func scanSensitive(v *voter, t string) {
	if strings.IndexByte(t, '\\') >= 0 {
		t = strings.ReplaceAll(t, `\`, "/")
	}
	if reHarmlessSystem.match(v, t) {
		return
	}
	if ext := fixtureKeyExt(t); ext != "" {
		// A key or certificate in a project's test fixtures is test material: judge the path by
		// its name alone (id_rsa, .env, credentials.json still count), not by its extension.
		t = t[:len(t)-len(ext)]
	} else if publicPEM(t) {
		// A certificate or public key is published by design: judge it by its name alone.
		t = strings.TrimSuffix(t, ".pem")
	}
	applyAll(v, sensitiveRules, t)
	if m := drivePath(t); m != "" {
		v.add(SensitivePaths, "drive_path", 0.5, m)
	}
	if s := secretStorePath(t); s != nil {
		v.add(SensitivePaths, "secret_store", 0.85, t)
	}
	if stem := backupStem(t); stem != "" && (reSecretName.match(v, stem) || secretStorePath(stem) != nil) {
		v.add(SensitivePaths, "secret_backup", 0.85, t)
	}
	if m := credentialConfig(t); m != "" {
		v.add(SensitivePaths, "credential_config", 0.85, m)
	}
	if rule := passwordFile(t); rule != "" {
		v.add(SensitivePaths, rule, 0.85, t)
	} else if rule := siteSecret(t); rule != "" {
		v.add(SensitivePaths, rule, 0.85, t)
	}
	if m := absoluteSystemPath(t); m != "" {
		v.add(SensitivePaths, "absolute_path", 0.4, m)
	}
	for _, ru := range configRules[0].tail {
		if v.cand[ru.id] {
			if !projectPath(t) {
				applyAll(v, configRules, t)
			}
			break
		}
	}
}

// ---------------------------------------------------------------- path traversal

var traversalRules = []rule{
	r(PathTraversal, "filter_evasion", 0.9, "..", `\.{3,}/|\.\.;/|\.\.//|\.\./\./\.\./|\.\.\./|\.\./+\.\.\b[^/]`),
	r(PathTraversal, "to_system_dir", 0.9, "..", `\.\./+(?:[a-z]:/)?(?:etc|proc|sys|root|boot|dev|var|usr|opt|bin|tmp|home|windows|winnt|inetpub|xampp|wamp|program files|documents and settings|users|apache|mysql|php|tomcat|private|library)(?:/|$)`),
	r(PathTraversal, "lfi_wrapper", 0.9, "://|:/", `\b(?:php|zip|phar|expect|data|glob|compress\.zlib|compress\.bzip2|input)://|php://filter|file:/`),
	r(PathTraversal, "absolute_escape", 0.85, "..", `^/+(?:\.\./)+`),
	r(PathTraversal, "dotdot", 0.45, "..", `(?:^|/|=)\.\.(?:/|$)`),
	r(PathTraversal, "to_script_or_db", 0.75, "..", `\.\./(?:[^\s/]+/)*[^\s/]+\.(?:php\d?|asp|aspx|jsp|cgi|pl|db|sql|sqlite3?|mdb|bak|old|conf|ini|log|cfg|inc)\b`),
	r(PathTraversal, "stripped_percent", 0.9, "..", `\.\.(?:2f|5c|c0af|c1 9c)[a-z.]`),
	// A parent-directory step written in hex notation (`0x2e0x2e/`, `..0x2f`, `0x2e0x2e0x5c`):
	// the byte values of a dot and a separator, which a decoder that reads 0xNN turns back into
	// `../`. Both a step and a separator must be there, one of them in hex, and a plain `..`
	// must start the value or follow a separator: `0..0x2f` is a range (Rust, Kotlin, Ruby).
	r(PathTraversal, "hex_notation", 0.9, "0x2e|0x2f|0x5c", `0x2e0x2e(?:/|0x2f|0x5c)|(?:^|[/\\=]|0x2f|0x5c)\.\.(?:0x2f|0x5c)`),
	// A parent-directory step whose separator is a character no path holds: a private-use code
	// point (`..%uF025`, `..%uEFC8`: bogus %u escapes) or the replacement character (`..%c0%2f`,
	// an invalid byte), followed by another step or a slash: a decoder that maps it to a
	// separator climbs out.
	r(PathTraversal, "junk_separator", 0.9, "..", `\.\.[\x{e000}-\x{f8ff}\x{fffd}]+(?:\.\.|/)`),
}

// scanTraversal counts parent-directory segments and looks at how they were written: encoded,
// overlong, backslashed, NUL-terminated or aimed at a sensitive file.
func scanTraversal(v *voter, raw string, n *Normalized) {
	t := n.Text
	if !strings.Contains(t, "..") && !strings.Contains(t, ":/") && !strings.Contains(t, "0x2e") {
		return
	}
	backslash := strings.IndexByte(t, '\\') >= 0
	if backslash {
		t = strings.ReplaceAll(t, `\`, "/")
	}
	applyAll(v, traversalRules, t)
	ups := strings.Count(t, "../") + boolInt(strings.HasSuffix(t, ".."))
	if ups == 0 {
		return
	}
	switch {
	case ups >= 5:
		v.add(PathTraversal, "depth>=5", 0.85, "")
	case ups >= 3:
		v.add(PathTraversal, "depth>=3", 0.65, "")
	}
	rawHasDots := strings.Contains(raw, "../") || strings.Contains(raw, `..\`)
	if n.DecodeRounds > 0 && !rawHasDots {
		v.add(PathTraversal, "encoded", 0.9, "")
	}
	if n.DecodeRounds > 1 {
		v.add(PathTraversal, "double_encoded", 0.9, "")
	}
	if n.Overlong {
		v.add(PathTraversal, "overlong_utf8", 0.95, "")
	}
	if n.NUL {
		v.add(PathTraversal, "nul_byte", 0.8, "")
	}
	if backslash {
		v.add(PathTraversal, "backslash", 0.4, "")
	}
	if i := strings.Index(t, ".."); i >= 0 {
		after := t[i:]
		if loc := reSecretName.find(v, after); loc != nil {
			v.add(PathTraversal, "to_secret_file", 0.85, snippet(after, loc))
		} else if loc := reServerConfig.find(v, after); loc != nil {
			v.add(PathTraversal, "to_server_config", 0.8, snippet(after, loc))
		}
	}
	if n.Text != strings.ToLower(raw) && strings.Contains(raw, "%") && strings.Contains(t, "../") {
		v.add(PathTraversal, "percent_mix", 0.3, "")
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ---------------------------------------------------------------- SQL injection

var sqlRules = []rule{
	r(SQLInjection, "union_select", 0.6, "union", `\bunion\b(?:\s|/\*.*?\*/|\+|\(|all|distinct)*select\b`),
	r(SQLInjection, "union_null", 0.9, "union", `\bunion\b.{0,40}\bselect\b.{0,80}(?:\bnull\b|@@|\bchar\s*\(|concat|0x[0-9a-f]{4,}|information_schema|--|#|/\*)`),
	r(SQLInjection, "time_based", 0.9, "sleep|benchmark|waitfor|dbms_|pg_sleep", `\b(?:sleep|pg_sleep|benchmark|randomblob)\s*\(|\bwaitfor\s+(?:delay|time)\b|dbms_pipe\.receive_message|dbms_lock\.sleep`),
	r(SQLInjection, "dangerous_fn", 0.85, "xp_|sp_|load_file|outfile|dumpfile|utl_|extractvalue|updatexml|exec", `\bxp_\w+|\bsp_(?:executesql|oacreate|makewebtask|addextendedproc|configure|password|adduser)|load_file\s*\(|into\s+(?:out|dump)file|utl_(?:http|inaddr|file)|extractvalue\s*\(|updatexml\s*\(|\bexec(?:ute)?\s+(?:master|xp_|sp_|\()`),
	r(SQLInjection, "schema_probe", 0.5, "information_schema|sysobjects|syscolumns|sqlite_master|pg_catalog|pg_shadow|mysql.user|@@|sys.|all_tables|user_tables", `information_schema|\bsysobjects\b|\bsyscolumns\b|sqlite_master|pg_catalog|pg_shadow|mysql\.user|@@(?:version|datadir|hostname|servername|basedir)|\bsys\.(?:databases|tables|objects)|\ball_tables\b|\buser_tables\b`),
	r(SQLInjection, "quote_tautology", 0.9, "'|\"|)", `['"\)]\s*\)*\s*(?:or|and|\|\||&&|xor)\b\s*\(*\s*(?:['"]?\d+['"]?|'[^']*'|"[^"]*"|true|false|null|not|\w+\s*\()\s*(?:=|<>|!=|<=|>=|<|>|\blike\b|\bis\b|\bin\b|\bbetween\b|regexp|--|#|/\*|$)|['"]\s*(?:or|\|\|)\s*['"]?\s*(?:true|1|not|\d)\b`),
	r(SQLInjection, "or_tautology", 0.55, "or", `\bor\b\s*\(*\s*['"]?(\w+)['"]?\s*(?:=|like)\s*['"]?\w+['"]?`),
	r(SQLInjection, "quote_comment", 0.8, "--|#|/*", `['"\)]\s*\)*\s*(?:;\s*)?(?:--(?:[^a-z]|$)|#|/\*)`),
	r(SQLInjection, "trailing_comment", 0.5, "--|#", `;\s*(?:--|#)\s*$`),
	r(SQLInjection, "if_probe", 0.85, "if", `\bif\s*\(\s*\d+\s*=\s*\d+\s*[,)]`),
	r(SQLInjection, "quote_like", 0.85, "like", `['"]\s*(?:or|and)\s+[\w.]+\s+like\s+['"]`),
	r(SQLInjection, "quote_stacked", 0.9, ";", `['"\)]\s*\)*\s*;\s*(?:drop|truncate|delete|insert|update|shutdown|exec|execute|declare|create|alter|grant|select|waitfor|if|begin|set|use)\b`),
	r(SQLInjection, "stacked", 0.6, ";", `;\s*(?:drop\s+(?:table|database|user)|truncate\s+table|delete\s+from|insert\s+into|update\s+\w+\s+set|shutdown|exec(?:ute)?\s|declare\s+@|create\s+(?:user|table|login)|alter\s+(?:table|user|login)|grant\s)`),
	r(SQLInjection, "fragment_start", 0.85, "and|or|union|order|group|having|select|procedure|limit|waitfor|'|\"|)", `^['"\)\s]*\)*\s*(?:and|or|xor|&&|\|\|)\s+\(*['"]?[\w@.-]*['"]?\s*(?:==?|<|>|<>|!=|\b(?:like|between|is|in)\b)\s*|^['"\)]+\s*(?:union|order\s+by|group\s+by|having|select|insert|update|delete|drop|exec|declare|create|procedure|limit|waitfor|;|\+|\|\||and|or)\b|^['"]\s*(?:--|#|/\*)|^\s*(?:order|group)\s+by\s+\d+\s*(?:--|#|/\*|$)|^\s*(?:and|or|having)\s+\d+\s*[=<>]`),
	r(SQLInjection, "numeric_tautology", 0.8, "or", `\bor\s+\(?\s*\d+\s*=\s*\d+`),
	r(SQLInjection, "and_probe_end", 0.75, "and", `\band\s+\d+\s*=\s*\d+\s*(?:--|#|/\*|;|$)`),
	r(SQLInjection, "mysql_comment", 0.8, "--+", `--\+`),
	r(SQLInjection, "quote_order_by", 0.9, "order|group", `['"]\s*\)*\s*(?:order|group)\s+by\s+\d`),
	r(SQLInjection, "declare_exec", 0.85, "declare|exec", `\bdeclare\s+@\w+\s+n?(?:var)?char|\bexec(?:ute)?\s*\(\s*@\w+\s*\)`),
	r(SQLInjection, "union_start", 0.85, "union", `^\s*-?\d*\s*['"\)]*\s*union\b\s*(?:all\b|distinct\b|select\b|\(|/\*|#|--|$)`),
	r(SQLInjection, "quote_or_quote", 0.85, "or", `['"]\s*or\s*['"]|['"]\s*\)\s*or\s*\(\s*['"]`),
	r(SQLInjection, "token_quote_logic", 0.85, "and|or", `^[\w.@-]{0,32}['"]\s*\)*\s*(?:and|or)\b`),
	r(SQLInjection, "load_infile", 0.85, "infile", `\bload\s+data\s+(?:local\s+)?infile\b`),
	r(SQLInjection, "sql_end_comment", 0.5, "--|#", `\b(?:select|union|from|where|and|or|null|tables?|columns?)\b.{0,80}?[\w)'"]\s*(?:--\+?|#)\s*$`),
	r(SQLInjection, "char_concat", 0.75, "char", `\b(?:char|chr|nchar)\s*\(\s*\d+\s*\)\s*(?:\+|\|\||,|\))`),
	r(SQLInjection, "cast_probe", 0.6, "convert|cast|ascii|substring|mid", `\bconvert\s*\(\s*int|\bcast\s*\(.{0,60}\bas\s+(?:int|varchar|char)|\b(?:ascii|ord)\s*\(\s*(?:substring|mid|substr)\s*\(`),
	r(SQLInjection, "nosql_operator", 0.85, "$", `\[\s*\$(?:ne|gt|gte|lt|lte|regex|where|exists|nin|in|or|and|not|expr)\s*\]|\{\s*['"]?\$(?:ne|gt|gte|lt|lte|regex|where|exists|nin|or|expr)['"]?\s*:|\$where\b`),
	r(SQLInjection, "nosql_js", 0.8, "this.|db.|sleep", `['"]\s*(?:\|\||&&)\s*['"]?\w*['"]?\s*==|\bthis\.\w+\s*==|db\.\w+\.(?:find|insert|drop|remove)\s*\(`),
	r(SQLInjection, "admin_comment", 0.8, "--|#", `^[\w.@-]{1,32}['"\)]+\s*(?:--|#|/\*)`),
	r(SQLInjection, "hex_blob", 0.5, "0x", `\b0x[0-9a-f]{8,}\b`),
	r(SQLInjection, "comment_obfuscation", 0.7, "/*", `\w/\*\*/\w|/\*!\d*\s*\w+`),
}

// scanSQL applies the SQL rules. An odd number of quotes (after dropping doubled ” escapes)
// is a vote on its own when the text also holds SQL syntax: balanced queries do not break out.
func scanSQL(v *voter, t string) {
	applyAll(v, sqlRules, t)
	if v.score(SQLInjection) > 0 {
		q := strings.Count(strings.ReplaceAll(t, "''", ""), "'")
		dq := strings.Count(t, `"`)
		if q%2 == 1 || dq%2 == 1 {
			v.add(SQLInjection, "unbalanced_quote", 0.35, "")
		}
	}
}

// ---------------------------------------------------------------- command injection

const shellCmds = `(?:cat|ls|id|whoami|uname|pwd|ifconfig|ipconfig|netstat|ps|wget|curl|nc|ncat|netcat|bash|sh|zsh|dash|ksh|csh|` +
	`python[23]?|perl|ruby|php|lua|node|telnet|ping|nslookup|dig|host|sleep|echo|rm|chmod|chown|mkfifo|mknod|socat|scp|ssh|ftp|tftp|` +
	`base64|xxd|crontab|systemctl|kill|reboot|shutdown|useradd|adduser|passwd|net|cmd|powershell|certutil|bitsadmin|type|dir|` +
	`hostname|tasklist|reg|wmic|tar|find|awk|sed|head|tail|more|less|env|printenv|openssl|dd|mkfs|sudo|su|touch|cp|mv|` +
	`systeminfo|whoami|ver|set|export|eval|exec|sh|nohup|xterm|uptime|w|last|df|mount|ls|busybox|gcc|cc|chattr|history|timeout|` +
	`curl\.exe|cmd\.exe|powershell\.exe|start|call|echo|print|for|while|sleep|dir|copy|del|rd|rmdir|taskkill|nslookup|net1|icacls|attrib|schtasks|at)`

var commandRules = []rule{
	r(CommandInjection, "leading_separator", 0.9, "", `^\s*(?:;|&&?|\|\|?|\n|\\n|`+"`"+`|\$\(|\$\{)\s*[a-z/.$\\{(]`),
	r(CommandInjection, "separator_binary", 0.85, "/bin/|/sbin/", `(?:;|&&?|\|\|?|\n|\\n|`+"`"+`|\$\()\s*/(?:usr/)?s?bin/\w+`),
	r(CommandInjection, "code_exec", 0.85, "<?|system|exec|passthru|popen|eval|assert|phpinfo|$_|${", `<\?(?:php|=)|\b(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|assert|eval)\s*\(\s*['"$\x60]|\$_(?:get|post|request|cookie|server)\[|\{\$\{?\w*\(|phpinfo\s*\(\)`),
	r(CommandInjection, "shellshock", 0.95, "(", `\(\)\s*\{\s*:?\s*;?\s*\}\s*;`),
	r(CommandInjection, "ssi", 0.9, "<!--#", `<!--#\s*(?:exec|include|echo|printenv|config)\b`),
	r(CommandInjection, "admin_tamper", 0.85, "iptables|xmrig|miner|systemctl|setenforce|kill|history|histfile|sudo|shred|ufw|auditd|nohup|chattr|>", `\biptables\s+-[fx]\b|\b(?:xmrig|minerd|cpuminer|cryptonight|stratum\+tcp)\b|\bsystemctl\s+(?:stop|disable|mask)\s+(?:auditd|firewalld|apparmor|ufw|sshd|rsyslog|falco|osqueryd|crowdstrike|falcon|wazuh)|\bsetenforce\s+0|\bkill\s+-9\s+-1\b|\bhistory\s+-c\b|unset\s+histfile|\bsudo\s+(?:-n\s+true|su\b|-i\b|-s\b|bash|sh\b)|\bshred\s|\bufw\s+disable|\bchattr\s+[+-]i|>\s*/var/log/|\bservice\s+auditd\s+stop`),
	r(CommandInjection, "powershell_cradle", 0.85, "iex|invoke-", `\biex\s*\(|\binvoke-(?:expression|webrequest|restmethod|shellcode|mimikatz|conptyshell|powershelltcp)\b|\bnew-object\s+net\.webclient`),
	r(CommandInjection, "separator_interpreter", 0.8, "perl|python|ruby|php|node", `(?:;|&&?|\|\|?|\n|\\n)\s*(?:perl|python[23]?|ruby|php|node)\s+-[a-z]*e`),
	r(CommandInjection, "quote_break", 0.9, "'|\"", `['"]\s*(?:;|&&?|\|\||\n|`+"`"+`|\$\()\s*`+shellCmds+`\b`),
	r(CommandInjection, "separator_recon", 0.8, ";|&|||\n|`|$(", `(?:;|&&?|\|\|?|\n|`+"`"+`|\$\()\s*(?:id|whoami|uname(?:\s+-a)?|ifconfig|ipconfig(?:\s+/all)?|hostname|systeminfo|ver|net\s+(?:user|localgroup|view|share)|cat\s+/etc/|type\s+c:|ls\s+-la?\s+/|dir\s+c:|printenv|env|set|netstat|tasklist|ps\s+(?:-ef|aux))\b`),
	r(CommandInjection, "subst_recon", 0.85, "$(|`", `(?:\$\(|`+"`"+`)\s*(?:cat|whoami|id|uname|hostname|ls|curl|wget|nc|sleep|ping|nslookup|dig|base64|echo|rm|chmod|bash|sh|python\d?|perl|ifconfig|env|printenv|systemctl|kill|sudo|iptables|reboot|shutdown|useradd|crontab|/)\b`),
	r(CommandInjection, "reverse_shell", 0.95, "/dev/|nc|bash|sh|socat|mkfifo|pty|socket|fsockopen|msf|meterpreter|proc_open|telnet", `/dev/(?:tcp|udp)/|-rsocket|tcpsocket\.(?:new|open)|io::socket|socket::inet|new-object\s+system\.net\.sockets|\bn(?:c|cat|etcat)\b[^|;&\n]*\s-[a-z]*[ec]\b|\b(?:ba|z|k|c|da)?sh\s+-i\b|\bmkfifo\b|\bsocat\b.*\b(?:exec|tcp|system)|pty\.spawn|socket\.socket|fsockopen|proc_open|msfvenom|meterpreter|telnet\s+\S+\s+\d+\s*\|`),
	r(CommandInjection, "script_one_liner", 0.85, "python|perl|ruby|php|node|lua|awk|powershell|pwsh", `\b(?:python[23]?|perl|ruby|php|node|lua)\s+-[a-z]*[ecr]\s+['"]?.{0,40}(?:import|socket|system|exec|spawn|require|fsockopen|popen|child_process)|\bawk\b.*/inet/|\b(?:powershell|pwsh)(?:\.exe)?\b.*(?:-e(?:nc|ncodedcommand)?\s|iex|invoke-expression|downloadstring|downloadfile|net\.webclient|-nop|-w\s+hidden|bypass)`),
	r(CommandInjection, "pipe_to_shell", 0.6, "curl|wget|fetch", `\b(?:curl|wget|fetch)\b[^|;&\n]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b`),
	r(CommandInjection, "download_insecure", 0.5, "curl|wget", `\b(?:curl|wget)\b[^|;&\n]*(?:http://|\d+\.\d+\.\d+\.\d+|/tmp/|-o\s*/)`),
	r(CommandInjection, "download_exec", 0.95, "curl|wget|fetch|certutil|bitsadmin|iwr|invoke-webrequest", `\b(?:curl|wget)\b[^;&\n]{0,120}(?:;|&&)\s*(?:chmod\s+\+?[0-7x]+|sh\s|bash\s|\./)|certutil(?:\.exe)?\s.*-urlcache|bitsadmin(?:\.exe)?\s+/transfer|\b(?:iwr|invoke-webrequest)\b.*\|\s*iex`),
	r(CommandInjection, "exfiltration", 0.9, "curl|wget|nc|scp|base64|ftp|tar", `\b(?:curl|wget)\b[^\n]{0,80}\s(?:-d|--data(?:-binary|-urlencode)?|-f|--form|-t|--upload-file|--post-file|--body-file)\s*['"]?@?(?:/etc|/root|/home|~|\$home|\.ssh|\.aws|\.env|/proc|/var)|\|\s*(?:nc|ncat|netcat|telnet|curl|wget)\b|\bscp\b[^\n]{0,80}\s\S+@[\w.-]+:|\b(?:cat|tar|zip|base64)\b[^|;&\n]{0,80}\|\s*(?:nc|curl|base64|xxd|openssl)\b|\bcurl\b[^\n]{0,80}(?:\$\(|`+"`"+`)`),
	r(CommandInjection, "destructive", 0.9, "rm|chmod|mkfs|dd|:(){|>|shutdown|reboot|format|del", `\brm\s+(?:-[a-z-]+\s+)*(?:/+\*?|~/?\*?|\$home/?\*?|--no-preserve-root|/(?:etc|bin|usr|var|home|boot|lib|root|sbin)\b)(?:\s|$|;|&|\|)|\bchmod\s+(?:-r\s+)?[0-7]?777\s+/|\bmkfs(?:\.\w+)?\s|\bdd\s+if=.*of=/dev/|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|>\s*/dev/sd[a-z]|(?:;|&&|\|)\s*(?:shutdown|reboot|halt|poweroff|init\s+0)\b|\bformat\s+c:|\bdel\s+/[fsq]`),
	r(CommandInjection, "persistence", 0.9, "authorized_keys|cron|rc.local|sudoers|passwd|shadow|useradd|adduser|bashrc|profile|schtasks", `(?:>>?|tee\s+-a)\s*\S*(?:authorized_keys|/etc/(?:cron|rc\.local|sudoers|passwd|shadow|profile)|\.bashrc|\.profile|\.bash_profile)|\bcrontab\b\s*(?:-r|-l\s*\||-)|\|\s*crontab\b|(?:;|&&|\||\n)\s*(?:useradd|adduser|usermod)\b|\bschtasks\s+/create`),
	r(CommandInjection, "ifs_evasion", 0.9, "ifs|${|$'", `\$\{?ifs\}?|\$\{[a-z_]+:\d+:\d+\}|\$'\\x[0-9a-f]{2}|\$\{[a-z_]*//`),
	r(CommandInjection, "blind_delay", 0.85, "sleep|ping|timeout", `(?:;|&&?|\|\|?|\n|`+"`"+`|\$\()\s*(?:sleep\s+\d+|ping\s+-[nc]\s*\d+|timeout\s+/t\s+\d+)`),
	r(CommandInjection, "windows_chain", 0.8, "&|cmd|%comspec%", `&\s*(?:type|dir|net\s+user|whoami|ipconfig|systeminfo|tasklist|del|copy)(?:$|[^\w=&:-])|\bcmd(?:\.exe)?\s+/[ck]\s|%comspec%`),
	r(CommandInjection, "shell_path", 0.5, "/bin/|/usr/bin/", `/(?:usr/)?bin/(?:ba|z|da|k|c)?sh\b|/bin/(?:nc|busybox)\b`),
	r(CommandInjection, "value_then_command", 0.8, "", `^(?:\d[\d.]*|[\w-]+(?:\.[\w-]+)+)\s*(?:;|\|\|?|&&?|\n)\s*`+shellCmds+`\b`),
	r(CommandInjection, "brace_expansion", 0.85, "{", `\{\s*(?:cat|ls|id|wget|curl|nc|ncat|bash|sh|echo|ping|sleep|whoami|uname|rm|chmod|python[23]?|perl|ruby|php|base64|nslookup|dig)\s*,`),
	r(CommandInjection, "lang_reverse_shell", 0.9, "", `net\.dial\(\s*["']tcp|exec\.command\(\s*["'](?:cmd|sh|bash|powershell|/bin/)|\bcmd\.std(?:in|out)\s*=|getruntime\(\)\.exec\s*\(|new processbuilder\s*\(|require\(\s*['"]child_process['"]\s*\)\.(?:exec|spawn)|\bsubprocess\.(?:popen|call|run|check_output)\s*\(\s*\[?\s*['"](?:/bin/|sh\b|bash|cmd|powershell)|\bos\.(?:system|popen)\s*\(\s*['"]`),
	r(CommandInjection, "code_probe", 0.8, "", `^\W{0,3}(?:phpversion|phpinfo|system|passthru|shell_exec|exec|eval|getenv)\s*\([^)]{0,40}\)\s*;`),
	r(CommandInjection, "malicious_download", 0.7, "curl|wget", `\b(?:curl|wget)\s+(?:-\S+\s+)*https?://\S*(?:rce|shell|backdoor|payload|exploit|revshell|webshell|malware|implant)\S*`),
}

// reEncodedSeparator finds URL-encoded shell separators in the raw text (%0a, %3b, %26 ...).
var reEncodedSeparator = newGate(`(?i)%(?:25)*(?:0a|0d|3b|26|7c|60|24%28)`)

// shellCommands is shellCmds as a set, for separatorCommand.
var shellCommands = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Split(strings.Trim(shellCmds, "(?:)"), "|") {
		m[strings.ReplaceAll(c, `\.`, ".")] = true
	}
	for _, c := range []string{"python", "python2", "python3"} {
		m[c] = true
	}
	return m
}()

// separatorCommand finds a command separator (; && || newline) followed by a known command:
// a hand-written scan, because the regexp form (separator, spaces, one of a hundred words)
// has no literal a prefilter could use.
func separatorCommand(t string) string {
	for i := 0; i < len(t); i++ {
		c := t[i]
		j := -1
		switch {
		case c == ';' || c == '\n':
			j = i + 1
		case (c == '&' || c == '|') && i+1 < len(t) && t[i+1] == c:
			j = i + 2
		}
		if j < 0 {
			continue
		}
		for j < len(t) && (t[j] == ' ' || t[j] == '\t') {
			j++
		}
		k := j
		for k < len(t) && (t[k] >= 'a' && t[k] <= 'z' || t[k] >= '0' && t[k] <= '9' || t[k] == '.' || t[k] == '_') {
			k++
		}
		if k > j && shellCommands[t[j:k]] {
			return t[i:k]
		}
	}
	return ""
}

// reNulCommand is a bare command cut by a NUL byte (id%00, dir%00|): probing for a shell
// behind a file name parameter.
var reNulCommand = newGate(`^(?:id|dir|ls|whoami|ver|uname|pwd|hostname|ipconfig|ifconfig|net user|systeminfo)\b[\s|;&]*$`)

// splitCommandName finds a command name broken up by quotes, backslashes or $@ (w'h'o'am'i,
// c\at, wh$@oami): the shell joins the pieces, a filter looking for the name does not.
func splitCommandName(t string) string {
	start := -1
	for i := 0; i <= len(t); i++ {
		end := i == len(t)
		if !end {
			c := t[i]
			if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '\'' || c == '"' || c == '\\' || c == '$' || c == '@' || c == '.' {
				if start < 0 {
					start = i
				}
				continue
			}
		}
		if start >= 0 {
			tok := t[start:i]
			start = -1
			if len(tok) < 3 || !strings.ContainsAny(strings.Trim(tok, `'"`), `'"\$`) {
				continue
			}
			var b strings.Builder
			for k := 0; k < len(tok); k++ {
				switch c := tok[k]; {
				case c == '\'' || c == '"' || c == '\\':
				case c == '$' && k+1 < len(tok) && tok[k+1] == '@':
					k++
				default:
					b.WriteByte(c)
				}
			}
			if name := b.String(); len(name) >= 2 && shellCommands[name] && name != tok {
				return tok
			}
		}
	}
	return ""
}

func scanCommand(v *voter, raw, t string, n *Normalized) {
	applyAll(v, commandRules, t)
	if strings.ContainsAny(t, `'"\$`) {
		if m := splitCommandName(t); m != "" {
			v.add(CommandInjection, "split_command_name", 0.8, m)
		}
	}
	if n.NUL && reNulCommand.match(v, t) {
		v.add(CommandInjection, "nul_command", 0.8, t)
	}
	if m := separatorCommand(t); m != "" {
		v.add(CommandInjection, "separator_cmd", 0.4, m)
	}
	if v.score(CommandInjection) > 0 && strings.IndexByte(raw, '%') >= 0 && reEncodedSeparator.re().MatchString(raw) {
		v.add(CommandInjection, "encoded_separator", 0.6, "")
	}
}

// ---------------------------------------------------------------- XSS

var xssRules = []rule{
	r(XSS, "script_tag", 0.95, "<script|<scr", `<\s*/?\s*script\b`),
	r(XSS, "event_handler_tag", 0.95, "<", `<[a-z][^>]*?[\s/"'`+"`"+`]on[a-z]{3,}\s*=`),
	r(XSS, "js_uri", 0.9, "script|data:", `(?:java|vb) ?script ?:|data\s*:\s*(?:text/html|application/(?:x-)?javascript|image/svg\+xml)`),
	r(XSS, "attr_breakout", 0.9, "on", `['"`+"`"+`]\s*/?\s*on[a-z]{3,}\s*=|['"]\s*>\s*<\s*[a-z]`),
	// attr_list_breakout: a quote closes an attribute, one to three more attributes follow and
	// then an event handler whose value is code (a call, an index or a template before its first
	// space): `" autofocus href onfocus="((x)=>(confirm)(x))(1)`. Prose naming a handler
	// ("the "body" tag and onload= fires") has no code after the '='.
	r(XSS, "attr_list_breakout", 0.9, "on", `['"`+"`"+`]\s*(?:[a-z][a-z-]*(?:=(?:"[^"]*"|'[^']*'|[^\s"'>]*))?[\s/]+){1,3}on(?:error|load|loadend|focus|focusin|focusout|blur|click|dblclick|auxclick|contextmenu|mouse[a-z]*|pointer[a-z]*|key[a-z]*|touch[a-z]*|drag[a-z]*|drop|toggle|begin|end|finish|pageshow|animation[a-z]*|transition[a-z]*|scroll|input|change|submit|invalid|search|wheel|copy|paste|resize|select|hashchange|message|popstate|unload|beforeunload|play|pause|ended)\s*=\s*["'`+"`"+`]?[^\s>]*?[(\[`+"`"+`]`),
	r(XSS, "dangerous_attr", 0.85, "srcdoc|formaction|xlink|http-equiv|-moz-binding|expression|behavior|dynsrc|lowsrc|background", `\b(?:srcdoc|formaction|xlink:href|dynsrc|lowsrc)\s*=|http-equiv\s*=\s*['"]?refresh|-moz-binding|\bexpression\(|[:=]\s*expression\s*\(|behavior\s*:\s*url|background\s*=\s*['"]?javascript`),
	r(XSS, "js_sink", 0.7, "alert|prompt|confirm|document.|window.|eval|fromcharcode|atob|constructor|settimeout|top[|self[|print(", `\b(?:alert|prompt|confirm|print)\s*(?:\(|`+"`"+`|&#40;)|document\s*\.\s*(?:cookie|domain|write|location)|window\s*\.\s*(?:location|open|name)|\beval\s*\(|fromcharcode|\batob\s*\(|constructor\s*\(|settimeout\s*\(|\b(?:top|self|parent|frames)\s*\[`),
	r(XSS, "active_tag", 0.75, "<", `<\s*(?:iframe|frame|frameset|object|embed|applet|svg|math|base|link|meta|form|isindex|marquee|details|video|audio|img|image|body|style|xss|animate|set|foreignobject|template|noscript|xmp|plaintext|textarea|title|input|button|select|keygen)\b`),
	r(XSS, "html_tag_attr", 0.6, "<", `<\s*[a-z][a-z0-9-]*\s+[a-z-]+\s*=|<\s*[a-z][a-z0-9-]*/|</\s*[a-z][a-z0-9-]*\s*>`),
	r(XSS, "style_injection", 0.55, "<style|@import|url(|@keyframes", `<style\b|@import\b|@keyframes|url\s*\(\s*['"]?(?:javascript|#|data)`),
}

func scanXSS(v *voter, t string) {
	applyAll(v, xssRules, t)
	if m := spacedTag(t); m != "" {
		v.add(XSS, "spaced_tag", 0.8, m)
	}
	if m := externalSchema(t); m != "" {
		v.add(XSS, "external_schema", 0.8, m)
	}
}

// spacedTags are the elements spacedTag looks for: those that run script, load a resource or
// take input.
var spacedTags = map[string]bool{"script": true, "iframe": true, "frame": true, "frameset": true, "object": true, "embed": true,
	"applet": true, "svg": true, "math": true, "base": true, "link": true, "meta": true, "form": true, "isindex": true,
	"marquee": true, "details": true, "dialog": true, "video": true, "audio": true, "img": true, "image": true, "body": true,
	"style": true, "template": true, "input": true, "button": true, "textarea": true, "select": true, "keygen": true}

// spacedTag returns the text of a tag name written one letter at a time after '<'
// (`<s c r i p t`, `$<d i a l o g`): a filter evasion, since no one writes markup or prose
// that way. "" = none.
func spacedTag(t string) string {
	for i := strings.IndexByte(t, '<'); i >= 0; {
		j := i + 1
		for j < len(t) && t[j] == ' ' {
			j++
		}
		var name []byte
		end := j
		for end < len(t) && isLetter(t[end]) && (end+1 == len(t) || !isLetter(t[end+1])) {
			name = append(name, t[end])
			end++
			k := end
			for k < len(t) && (t[k] == ' ' || t[k] == '\t') {
				k++
			}
			if k == end || k >= len(t) || !isLetter(t[k]) {
				break
			}
			end = k
		}
		if len(name) >= 3 && spacedTags[string(name)] {
			return t[i:end]
		}
		n := strings.IndexByte(t[i+1:], '<')
		if n < 0 {
			break
		}
		i += 1 + n
	}
	return ""
}

// reExternalSchema is an XML schema location that names a remote document: a parser that
// validates the markup fetches it (an out-of-band probe, like an external entity).
var reExternalSchema = lazyre.New(`\bxsi:(?:no_?namespace)?schemalocation\s*=\s*['"][^'"]*https?://`)

// externalSchema returns the schemaLocation attribute of markup that points a parser at a
// remote document, or "".
func externalSchema(t string) string {
	if !strings.Contains(t, "schemalocation") {
		return ""
	}
	return reExternalSchema.FindString(t)
}
