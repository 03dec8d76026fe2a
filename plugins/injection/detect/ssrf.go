package detect

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/added060/palisade/plugins/internal/webhost"
)

// findURLs finds scheme://authority and //authority (protocol-relative) references anywhere in
// a text, including inside query parameters once decoded.
// It returns up to max index sextuples like regexp's FindAllStringSubmatchIndex for
// `(?:\b([a-z][a-z0-9+.-]{1,15}):)?//([^/?#\s'"<>\\]*)`, written by hand: the regexp needs
// its slow submatch engine over the whole text, and tool arguments hold many URLs.
func findURLs(t string, max int) [][]int {
	var out [][]int
	for off := 0; len(out) < max; {
		i := strings.Index(t[off:], "//")
		if i < 0 {
			break
		}
		i += off
		m := []int{i, 0, -1, -1, i + 2, 0}
		// scheme: letters, digits, + . - back from the ':' before "//", starting with a letter
		if i > 1 && t[i-1] == ':' {
			j := i - 1
			for j > 0 && isSchemeChar(t[j-1]) {
				j--
			}
			for j < i-1 && !(t[j] >= 'a' && t[j] <= 'z') {
				j++
			}
			if n := i - 1 - j; n >= 2 && n <= 16 && (j == 0 || !isWordChar(t[j-1])) {
				m[0], m[2], m[3] = j, j, i-1
			}
		}
		k := i + 2
		for k < len(t) && !strings.ContainsRune("/?#'\"<>\\ \n\t", rune(t[k])) {
			k++
		}
		m[5], m[1] = k, k
		out = append(out, m)
		off = k
		if k == i+2 {
			off = i + 2
		}
	}
	return out
}

func isSchemeChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 'A' && c <= 'Z'
}

// reAtHost finds the host after an '@' anywhere in a URL-ish text: parser-confusion payloads
// (http://allowed.com?@127.0.0.1/, http://a.com%2f@[::1]) put the real target there.
var reAtHost = newGate(`[^\s@]@(\[[0-9a-f:.]+\]|[0-9a-z][0-9a-z.-]*)(?::(\d{1,5}))?`)

// reConfusion finds characters that make URL parsers disagree about where the host ends.
var reConfusion = newGate(`(?:[?#]|%23|%2f|%252f|\\)@`)

// reInternalPath lists admin and control-plane paths worth nothing on a public site but much on
// a loopback or private host.
var reInternalPath = newGate(`^/(?:admin|server-status|server-info|actuator|_cat|_cluster|_nodes|_all|_search|_all_dbs|v2/_catalog|debug/(?:vars|pprof)|containers/json|images/json|v1/(?:agent|kv|sys|secret|catalog)|console|manager/html|jmx-console|web-console|phpmyadmin|solr|api/v1/namespaces|pods|version|info|env|\.env|script|minio|computemetadata|latest|metadata|service/rest)`)

// reBareHost finds host:port and dotted numbers without a scheme.
var reBareHost = newGate(`(?:^|[\s=@(,'"])((?:localhost|(?:0x[0-9a-f]+|\d+)(?:\.(?:0x[0-9a-f]+|\d+)){0,3}|\[[0-9a-f:.]+\]))(?::(\d{1,5}))?(?:/|$|\s)`)

var dangerousSchemes = map[string]float64{
	"gopher": 0.95, "dict": 0.95, "ldap": 0.9, "ldaps": 0.9, "tftp": 0.9, "jar": 0.9, "netdoc": 0.95,
	"file": 0.85, "expect": 0.9, "sftp": 0.5, "smb": 0.7, "ftp": 0.3, "ssh": 0.4, "telnet": 0.7,
	"php": 0.7, "phar": 0.7, "ogg": 0.6, "rtsp": 0.5, "mailto": 0,
}

var metadataHosts = map[string]bool{
	"metadata.google.internal": true, "metadata": true, "metadata.goog": true, "instance-data": true,
	"metadata.azure.com": true, "metadata.packet.net": true, "metadata.platformequinix.com": true,
	"169.254.169.254": true, "100.100.100.200": true, "169.254.170.2": true, "169.254.169.123": true,
	"fd00:ec2::254": true, "192.0.0.192": true,
}

// internalPorts are ports of services that should never be reached from a tool: caches,
// databases, container and cluster control planes, mail.
var internalPorts = map[int]bool{
	22: true, 23: true, 25: true, 111: true, 135: true, 139: true, 445: true, 873: true, 1433: true,
	1521: true, 2049: true, 2375: true, 2376: true, 2379: true, 2380: true, 3306: true, 4369: true,
	5432: true, 5984: true, 6379: true, 6443: true, 7001: true, 8200: true, 8500: true, 8983: true,
	9042: true, 9092: true, 9200: true, 9300: true, 10250: true, 10255: true, 11211: true,
	15672: true, 27017: true, 50070: true, 61616: true, 4040: true, 8086: true, 9090: true,
	9100: true, 16686: true, 5601: true, 8161: true, 1099: true, 4848: true, 9000: true,
}

var reMetaPath = newGate(`/latest/(?:meta-data|user-data|api/token|dynamic)|/computemetadata/|/metadata/(?:instance|identity|v1|scheduledevents)|/openstack/latest|/metadata/v1|/v1/metadata|/hetzner/v1|/opc/v[12]/|/iam/security-credentials`)

// loopbackNames are the loopback names /etc/hosts gives besides localhost (Debian, RHEL):
// no one types them to reach a development server (classifyHost: loopback_alias).
var loopbackNames = map[string]bool{"localhost.localdomain": true, "ip6-localhost": true, "ip6-loopback": true,
	"localhost4": true, "localhost6": true, "localhost4.localdomain4": true, "localhost6.localdomain6": true}

// schemelessTarget classifies the host of a URL argument written without a scheme
// ("host.docker.internal/", "10.0.0.5:6379"): the tool fetches it all the same. 0 = none.
func schemelessTarget(u string) (float64, string) {
	if strings.Contains(u, "://") || strings.HasPrefix(u, "/") {
		return 0, ""
	}
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.LastIndexByte(u, '@'); i >= 0 {
		u = u[i+1:]
	}
	port := -1
	if i := strings.LastIndexByte(u, ':'); i >= 0 && !strings.HasSuffix(u, "]") {
		if p, err := strconv.Atoi(u[i+1:]); err == nil {
			port = p
			u = u[:i]
		}
	}
	return classifyHost(strings.Trim(strings.ToLower(u), "[]"), port)
}

// internalSuffixes are DNS names that only resolve inside a network or cluster.
var internalSuffixes = []string{".internal", ".local", ".localdomain", ".intranet", ".corp", ".lan",
	".home.arpa", ".svc", ".cluster.local", ".consul", ".in-addr.arpa"}

func isInternalName(h string) bool {
	switch h {
	case "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local":
		return true
	}
	for _, s := range internalSuffixes {
		if strings.HasSuffix(h, s) || h == s[1:] {
			return true
		}
	}
	return false
}

// wildcardDNS are DNS services that resolve a name to the address written in it
// (127.0.0.1.nip.io, 10-0-0-1.sslip.io, 7f000001.nip.io, --1.sslip.io for ::1) or rebind it
// between addresses by design (rbndr.us, 1u.ms): a subdomain of one reaches whatever host its
// author wrote, without a DNS lookup saying so. The apex is the service's own site.
var wildcardDNS = []string{"nip.io", "sslip.io", "xip.io", "xip.name", "nip.direct", "traefik.me", "backname.io",
	"rbndr.us", "1u.ms", "rebind.it", "rebind.network", "r3dir.me", "localdomain.pw"}

// loopbackDomains resolve, apex and every subdomain, to 127.0.0.1: names made to reach a
// local server through filters that only refuse "localhost".
var loopbackDomains = []string{"localtest.me", "lvh.me", "vcap.me", "lacolhost.com", "fuf.me", "yoogle.com",
	"localho.st", "smackaho.st", "local.gd", "localhost.direct"}

// loopbackHosts are single public names that resolve to a loopback address (SSRF payload lists
// use them: 127.0.0.1, 127.0.0.2, 127.0.0.6).
var loopbackHosts = map[string]bool{"spoofed.burpcollaborator.net": true, "bugbounty.dod.network": true, "mail.ebc.apple.com": true}

// under reports whether h is a subdomain of domain (apex too when apex is set), matching on a
// label boundary ('.' or, for the dashed forms of wildcard DNS, '-').
func under(h, domain string, apex bool) bool {
	if !strings.HasSuffix(h, domain) {
		return false
	}
	if len(h) == len(domain) {
		return apex
	}
	c := h[len(h)-len(domain)-1]
	return c == '.' || c == '-'
}

// rebindTarget classifies a host under a wildcard DNS, loopback or rebinding service: ok is
// false when h is none. A wildcard name scores as the address written in it when that address
// is internal (169.254.169.254.nip.io is the metadata service), and at least 0.9: the name
// exists to reach an address a filter would refuse.
func rebindTarget(h string, port int) (w float64, rule string, ok bool) {
	if loopbackHosts[h] {
		return 0.9, "loopback_domain", true
	}
	for _, s := range loopbackDomains {
		if under(h, s, true) {
			return 0.9, "loopback_domain", true
		}
	}
	for _, s := range wildcardDNS {
		if !under(h, s, false) {
			continue
		}
		if a, found := embeddedAddr(h[:len(h)-len(s)-1]); found {
			if w, rule := classifyHost(a, port); w > 0 {
				return max(w, 0.9), "wildcard_dns:" + rule, true
			}
		}
		return 0.9, "rebinding_domain", true
	}
	if strings.HasPrefix(h, "127-0-0-1.") || strings.Contains(h, ".rebind.") || strings.HasPrefix(h, "rebind.") {
		return 0.9, "rebinding_domain", true
	}
	return 0, "", false
}

// embeddedAddr finds the address a wildcard DNS name's labels spell (the part before the
// service's domain): four dotted numbers at the end (app.10.0.0.1), a label of four dashed
// numbers (10-0-0-1, app-10-0-0-1), eight hex digits (7f000001), or a dashed IPv6 (--1,
// fe80--1). The first found, as a host string for classifyHost.
func embeddedAddr(sub string) (string, bool) {
	labels := strings.Split(sub, ".")
	if n := len(labels); n >= 4 {
		if q := strings.Join(labels[n-4:], "."); isDotted(q) {
			return q, true
		}
	}
	for i := len(labels) - 1; i >= 0; i-- {
		l := labels[i]
		parts := strings.Split(l, "-")
		if n := len(parts); n >= 4 {
			if q := strings.Join(parts[n-4:], "."); isDotted(q) {
				return q, true
			}
		}
		if len(l) == 8 && isHexString(l) {
			v, _ := strconv.ParseUint(l, 16, 32)
			return strconv.FormatUint(v>>24, 10) + "." + strconv.FormatUint(v>>16&0xff, 10) + "." +
				strconv.FormatUint(v>>8&0xff, 10) + "." + strconv.FormatUint(v&0xff, 10), true
		}
		if strings.Contains(l, "--") || strings.Count(l, "-") >= 2 {
			if a, err := netip.ParseAddr(strings.ReplaceAll(l, "-", ":")); err == nil && a.Is6() {
				return a.String(), true
			}
		}
	}
	return "", false
}

// isDotted: four decimal numbers 0-255 joined by dots.
func isDotted(q string) bool {
	a, err := netip.ParseAddr(q)
	return err == nil && a.Is4()
}

func isHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// devPorts on localhost are the ports local dev servers use; with no other signal, a localhost
// URL on one of them is most likely a developer's own app (a hard negative in the data).
var devPorts = map[int]bool{
	3000: true, 3001: true, 4000: true, 4200: true, 5000: true, 5173: true, 5174: true, 8000: true,
	8080: true, 8081: true, 8443: true, 8888: true, 1234: true, 4321: true, 6006: true, 3030: true,
}

func scanSSRF(v *voter, t string, n *Normalized) {
	if w, rule := bareURL(t); w > 0 {
		v.add(SSRF, "bare_url:"+rule, w, truncateUTF8(t, maxMatch))
	}
	if !strings.Contains(t, "//") && !strings.Contains(t, "localhost") && !hasDigitDot(t) &&
		!strings.Contains(t, "metadata") && !strings.Contains(t, "[") {
		return
	}
	slashless(v, t)
	if strings.Contains(t, "jar:") {
		v.add(SSRF, "scheme:jar", 0.9, "jar:")
	}
	if loc := reMetaPath.find(v, t); loc != nil {
		v.add(SSRF, "metadata_path", 0.9, snippet(t, loc))
	}
	best := 0.0
	urls := 0
	var benignAuth [4]string // authorities already found harmless in this text: skip repeats
	nb := 0
	for _, m := range findURLs(t, 16) {
		urls++
		scheme := ""
		if m[2] >= 0 {
			scheme = t[m[2]:m[3]]
		}
		if w, ok := dangerousSchemes[scheme]; ok && w > 0 {
			v.add(SSRF, "scheme:"+scheme, w, t[m[0]:min(len(t), m[0]+maxMatch)])
		}
		if scheme == "" && m[0] > 0 && t[m[0]-1] != ' ' && t[m[0]-1] != '=' && t[m[0]-1] != '"' && t[m[0]-1] != '\'' {
			continue // a path like a//b, not a protocol-relative URL
		}
		auth := t[m[4]:m[5]]
		if slices.Contains(benignAuth[:nb], auth) {
			continue
		}
		if i := strings.LastIndexByte(auth, '@'); i >= 0 {
			v.add(SSRF, "userinfo", 0.25, auth)
			auth = auth[i+1:]
		}
		host, port := splitHostPort(auth)
		w, rule := classifyHost(host, port)
		if w == 0 {
			if nb < len(benignAuth) && !strings.Contains(auth, "@") {
				benignAuth[nb] = auth
				nb++
			}
			continue
		}
		rest := t[m[1]:]
		nested := m[0] > 0
		switch {
		case w < 0.85 && nested:
			// An internal URL inside another URL's parameter or a sentence is a fetch target
			// someone is steering, not the developer's own dev server.
			w, rule = 0.85, rule+"+nested"
		case w < 0.85 && reInternalPath.re().MatchString(rest):
			w, rule = 0.85, rule+"+internal_path"
		case w < 0.85 && n.NFKC:
			w, rule = 0.85, rule+"+unicode_notation"
		case w < 0.85 && n.DecodeRounds > 0:
			w, rule = 0.85, rule+"+encoded"
		}
		best = max(best, w)
		v.add(SSRF, rule, w, t[m[0]:min(len(t), m[0]+maxMatch)])
	}
	if best == 0 && urls > 0 && hasDigitDot(t) {
		// A redirector that takes its target in the path (nicob.net/redir-http-169.254.169.254:80-,
		// ssrf.localdomain.pw/img-without-body/301-http-127.0.0.1:80-.i.jpg) sends the fetch on
		// to the address written there.
		if w, rule, m := addressInPath(t); w > 0 {
			best = w
			v.add(SSRF, "redirect_target:"+rule, w, m)
		}
	}
	if urls > 0 {
		for _, m := range reAtHost.findAll(v, t, 8) {
			port := -1
			if m[4] >= 0 {
				port, _ = strconv.Atoi(t[m[4]:m[5]])
			}
			if w, rule := classifyHost(strings.Trim(t[m[2]:m[3]], "[]"), port); w > 0 {
				w = max(w, 0.85)
				best = max(best, w)
				v.add(SSRF, "after_at:"+rule, w, snippet(t, m[:2]))
			}
		}
		if loc := reConfusion.find(v, t); loc != nil && best > 0 {
			v.add(SSRF, "parser_confusion", 0.5, snippet(t, loc))
		}
	}
	if best == 0 && (hasDigitDot(t) || strings.Contains(t, "localhost") || strings.Contains(t, "[")) {
		for _, m := range reBareHost.findAll(v, t, 8) {
			host := t[m[2]:m[3]]
			port := -1
			if m[4] >= 0 {
				port, _ = strconv.Atoi(t[m[4]:m[5]])
			}
			if port < 0 && !strings.ContainsAny(host, ".[") {
				continue // a bare number or the word localhost
			}
			if port < 0 && decimalNumber(host) {
				continue // "size 10.5 or 11": a decimal, not 10.0.0.5 (issue 26)
			}
			if w, rule := classifyHost(strings.Trim(host, "[]"), port); w > 0 {
				v.add(SSRF, "bare:"+rule, w*0.9, snippet(t, []int{m[2], m[1]}))
			}
		}
	}
}

// slashless finds http: and https: followed by a host without "//" (http:127.0.0.1,
// https:\\10.0.0.1): WHATWG URL parsers, browsers and many HTTP clients read them as
// http://127.0.0.1.
func slashless(v *voter, t string) {
	for off := 0; ; {
		i := strings.Index(t[off:], "http")
		if i < 0 {
			return
		}
		i += off
		off = i + 4
		j := i + 4
		if j < len(t) && t[j] == 's' {
			j++
		}
		if j >= len(t) || t[j] != ':' || i > 0 && isWordChar(t[i-1]) {
			continue
		}
		j++
		k := j
		for k < len(t) && (t[k] == '/' || t[k] == '\\') {
			k++
		}
		if k-j == 2 && t[j] == '/' && t[j+1] == '/' {
			continue // an ordinary URL: findURLs has it
		}
		e := k
		for e < len(t) && !strings.ContainsRune("/?#'\"<>\\ \n\t", rune(t[e])) {
			e++
		}
		host, port := splitHostPort(t[k:e])
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
		if w, rule := classifyHost(strings.Trim(host, "[]"), port); w > 0 {
			v.add(SSRF, "slashless:"+rule, max(w, 0.85), t[i:e])
		}
	}
}

// bareURL classifies a text that is one URL without a scheme — a host or address, an optional
// port, then a path ("lvh.me/", "host.docker.internal/", "10.0.0.5:6379/"): fetched all the
// same where a URL is expected. Only an internal or loopback target counts, and localhost on
// its own does not (a developer's own server).
func bareURL(t string) (float64, string) {
	t = strings.TrimSpace(t)
	slash := strings.IndexByte(t, '/')
	if slash <= 0 || len(t) > 2048 || strings.ContainsAny(t, " \t\n") || strings.Contains(t, "://") {
		return 0, ""
	}
	for i := 0; i < slash; i++ {
		if c := t[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_') {
			return 0, ""
		}
	}
	if !strings.ContainsAny(t[:slash], ".:") && !strings.HasPrefix(t, "localhost") {
		return 0, "" // a relative path ("src/main.go"), not a host
	}
	w, rule := schemelessTarget(t)
	if w < 0.5 {
		return 0, ""
	}
	return w, rule
}

// addressInPath finds an IPv4 address written in the path or query of a URL that is loopback,
// link-local or a metadata address, and returns its score, rule and the text around it.
func addressInPath(t string) (float64, string, string) {
	for _, m := range findURLs(t, 4) {
		rest := t[m[5]:]
		if i := strings.IndexAny(rest, " \n\t"); i >= 0 {
			rest = rest[:i]
		}
		for i := 0; i < len(rest); i++ {
			if rest[i] < '0' || rest[i] > '9' || i > 0 && (rest[i-1] >= '0' && rest[i-1] <= '9' || rest[i-1] == '.') {
				continue
			}
			e := i
			for e < len(rest) && (rest[e] >= '0' && rest[e] <= '9' || rest[e] == '.') {
				e++
			}
			q := strings.TrimRight(rest[i:e], ".")
			if !isDotted(q) {
				continue
			}
			a, _ := netip.ParseAddr(q)
			switch {
			case metadataHosts[q]:
				return 0.9, "metadata_ip", rest[max(0, i-24):e]
			case a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsUnspecified():
				return 0.85, "internal_ip", rest[max(0, i-24):e]
			}
		}
	}
	return 0, "", ""
}

func hasDigitDot(t string) bool {
	for i := 1; i+1 < len(t); i++ {
		if t[i] == '.' && t[i-1] >= '0' && t[i-1] <= '9' && t[i+1] >= '0' && t[i+1] <= '9' {
			return true
		}
	}
	return false
}

// splitHostPort splits an authority without userinfo. Port is -1 when absent or invalid.
// A dotted host followed by several :ports (10.0.0.5:8080:80) keeps the first.
func splitHostPort(a string) (string, int) {
	if i := strings.IndexByte(a, ':'); i > 0 && strings.Count(a, ":") > 1 && !strings.HasPrefix(a, "[") && !isHexColon(a) {
		p := a[i+1:]
		if j := strings.IndexByte(p, ':'); j >= 0 {
			p = p[:j]
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			port = -1
		}
		return a[:i], port
	}
	if strings.Count(a, ":") > 2 && !strings.HasPrefix(a, "[") {
		// unbracketed IPv6, maybe with a port: 0:0:0:0:0:ffff:7f00:1:11211
		if _, err := netip.ParseAddr(a); err == nil {
			return a, -1
		}
		if i := strings.LastIndexByte(a, ':'); i > 0 {
			if _, err := netip.ParseAddr(a[:i]); err == nil {
				port, err := strconv.Atoi(a[i+1:])
				if err != nil {
					port = -1
				}
				return a[:i], port
			}
		}
	}
	if strings.HasPrefix(a, "[") {
		if i := strings.IndexByte(a, ']'); i > 0 {
			host := a[1:i]
			rest := a[i+1:]
			if strings.HasPrefix(rest, ":") {
				if p, err := strconv.Atoi(rest[1:]); err == nil {
					return host, p
				}
			}
			return host, -1
		}
	}
	if i := strings.LastIndexByte(a, ':'); i >= 0 && strings.Count(a, ":") == 1 {
		p, err := strconv.Atoi(a[i+1:])
		if err != nil {
			p = -1
		}
		return a[:i], p
	}
	return a, -1
}

// classifyHost scores a host: cloud metadata, loopback or unspecified (worse when written in
// an unusual notation), link-local, private, internal names and rebinding domains.
func classifyHost(host string, port int) (float64, string) {
	if host == "" {
		return 0, ""
	}
	if strings.HasSuffix(host, ".") {
		host = strings.TrimSuffix(host, ".")
		if w, rule := classifyHost(host, port); w > 0 {
			return max(w, 0.85), rule + "+trailing_dot"
		}
		return 0, ""
	}
	if host == "0" {
		return 0.85, "unspecified"
	}
	if strings.HasPrefix(host, "localhost.") || strings.HasPrefix(host, "127.0.0.1.") || strings.Contains(host, ".localhost.") {
		return 0.8, "loopback_lookalike"
	}
	if metadataHosts[host] {
		return 1, "metadata_host"
	}
	if webhost.OutOfBand(host) {
		// A callback endpoint of an out-of-band interaction service (abc123.oast.pro,
		// x.burpcollaborator.net): a blind injection's proof, or data carried out in the name
		// or the query. No one's own work fetches one.
		return 0.9, "oob_endpoint"
	}
	if webhost.RequestCatcher(host) {
		// A request catcher (webhook.site, *.m.pipedream.net) records whatever reaches it for
		// whoever made the endpoint: a developer testing a webhook, or an injected instruction
		// receiving what the fetch carries. Asked (catcherOnly).
		return 0.8, "request_catcher"
	}
	if w, rule, ok := rebindTarget(host, port); ok {
		return w, rule
	}
	if loopbackNames[host] {
		// A developer reaches their own server as localhost or 127.0.0.1; the other names
		// /etc/hosts gives loopback are what payload lists use to pass a filter that refuses
		// "localhost".
		return 0.8, "loopback_alias"
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		switch {
		case internalPorts[port]:
			return 0.9, "loopback_service_port"
		case port < 0 || devPorts[port]:
			return 0.35, "localhost"
		}
		return 0.6, "localhost_port"
	}
	addr, canonical, ok := parseHostIP(host)
	if !ok {
		if isInternalName(host) {
			return 0.8, "internal_name"
		}
		return 0, ""
	}
	if metadataHosts[addr.String()] {
		return 1, "metadata_ip"
	}
	addr = addr.Unmap()
	weird := 0.0
	if v4, ok := embeddedV4(addr); ok {
		// An IPv6 address that carries an IPv4 one (::127.0.0.1, 64:ff9b::a9fe:a9fe,
		// 2002:a9fe:a9fe::) reaches it through a compatible stack, a NAT64 or a 6to4 relay.
		if w, rule := classifyHost(v4.String(), port); w > 0 {
			return max(w, 0.9), rule + "+ipv6_embedded"
		}
	}
	if !canonical {
		weird = 0.9
	}
	switch {
	case addr.IsLoopback() || addr.IsUnspecified():
		w := 0.75
		if internalPorts[port] {
			w = 0.9
		}
		if addr.IsUnspecified() {
			w = max(w, 0.85)
		}
		if addr.Is4() && addr != netip.AddrFrom4([4]byte{127, 0, 0, 1}) {
			w = max(w, 0.85)
		} else if addr.Is4() && canonical && (port < 0 || devPorts[port]) {
			w = 0.35 // 127.0.0.1:8000 is a dev server, like localhost:8000
		}
		return max(w, weird), "loopback_ip"
	case addr.IsLinkLocalUnicast():
		return 0.9, "link_local"
	case addr.IsPrivate() || isCGNAT(addr):
		w := 0.75
		if internalPorts[port] {
			w = 0.85
		}
		return max(w, weird), "private_ip"
	}
	if weird > 0 {
		return 0.5, "odd_ip_notation"
	}
	return 0, ""
}

// embeddedV4 returns the IPv4 address an IPv6 one carries: IPv4-compatible (::a.b.c.d, not
// :: or ::1), NAT64 (64:ff9b::/96) or 6to4 (2002:AABB:CCDD::/16).
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	zero := func(bs []byte) bool {
		for _, x := range bs {
			if x != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case zero(b[:12]) && !zero(b[12:15]): // ::a.b.c.d (not :: or ::1)
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(b[4:12]):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case b[0] == 0x20 && b[1] == 0x02:
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

func isCGNAT(a netip.Addr) bool {
	if !a.Is4() {
		return false
	}
	b := a.As4()
	return b[0] == 100 && b[1]&0xC0 == 64 || b[0] == 0
}

// parseHostIP parses IPv6 and IPv4 in any notation inet_aton accepts (1 to 4 parts, each
// decimal, 0x hex or 0 octal) plus the wrap-around trick (425.510.425.510 = 169.254.169.254).
// canonical is false for anything but plain dotted decimal or IPv6.
func parseHostIP(h string) (netip.Addr, bool, bool) {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '.' || c == ':' || c == 'x' || c == '%') {
			return netip.Addr{}, false, false // a name, not an address: skip the parsers
		}
	}
	if strings.Contains(h, ":") {
		if i := strings.IndexByte(h, '%'); i >= 0 {
			h = h[:i]
		}
		a, err := netip.ParseAddr(h)
		if err != nil {
			return netip.Addr{}, false, false
		}
		canonical := !a.Is4In6()
		return a, canonical, true
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false, false
	}
	vals := make([]uint64, len(parts))
	canonical := len(parts) == 4
	wrapped := false
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false, false
		}
		base := 10
		s := p
		switch {
		case strings.HasPrefix(p, "0x"):
			base, s = 16, p[2:]
			canonical = false
			if s == "" {
				s = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, s = 8, p[1:]
			canonical = false
		}
		n, err := strconv.ParseUint(s, base, 64)
		if err != nil {
			return netip.Addr{}, false, false
		}
		vals[i] = n
	}
	var ip uint64
	switch len(vals) {
	case 1:
		ip = vals[0]
	case 2:
		ip = vals[0]<<24 | vals[1]&0xFFFFFF
		if vals[0] > 255 || vals[1] > 0xFFFFFF {
			wrapped = true
		}
	case 3:
		ip = vals[0]<<24 | vals[1]<<16 | vals[2]&0xFFFF
		if vals[0] > 255 || vals[1] > 255 || vals[2] > 0xFFFF {
			wrapped = true
		}
	case 4:
		for _, x := range vals {
			if x > 255 {
				wrapped = true
			}
			ip = ip<<8 | x&0xFF
		}
	}
	if len(vals) == 1 && vals[0] < 1<<16 {
		return netip.Addr{}, false, false // a plain small number, not an address
	}
	if ip > 0xFFFFFFFF {
		wrapped = true
	}
	ip &= 0xFFFFFFFF
	if wrapped {
		canonical = false
	}
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), canonical, true
}

// isHexColon reports whether a looks like an unbracketed IPv6 address (hex digits, colons, dots).
func isHexColon(a string) bool {
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == ':' || c == '.') {
			return false
		}
	}
	return true
}

// decimalNumber reports whether s is digits, one dot and digits (10.5): in running text a
// number with a fraction, though inet_aton would read it as the address 10.0.0.5.
func decimalNumber(s string) bool {
	i := strings.IndexByte(s, '.')
	if i <= 0 || i == len(s)-1 || strings.IndexByte(s[i+1:], '.') >= 0 {
		return false
	}
	for j := 0; j < len(s); j++ {
		if j != i && (s[j] < '0' || s[j] > '9') {
			return false
		}
	}
	return true
}

// catcherOnly makes a text's SSRF finding a question (Hit.Uncertain) when all it found is a
// request catcher's address (webhook.site, *.m.pipedream.net; webhost.RequestCatcher): a
// developer testing a webhook, or the drop box of an injected instruction, which a careful
// reviewer asks about. An out-of-band endpoint, an internal address, or a catcher's URL
// nested in another or encoded (`request_catcher+nested`) still denies.
func catcherOnly(r *Result) {
	if onlySSRF(r, "request_catcher") {
		ssrfUncertain(r)
	}
}
