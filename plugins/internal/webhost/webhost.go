// Package webhost names public web services whose address says what a request to them does:
// out-of-band interaction servers, request catchers, URL shorteners, tunnels, paste sites and
// file drops, wildcard DNS. The injection stage's SSRF rules (plugins/injection/detect), the
// detector's plain-URL test (plugins/detector/scan) and the shell analysis's download-and-run
// judgement (plugins/internal/shell) read the same lists.
package webhost

import "strings"

// outOfBand are the domains of out-of-band interaction (OAST) services: every subdomain is an
// attacker's or a scanner's callback endpoint, made to prove that a blind injection ran or to
// carry data out in a name or a query. The apex is the service's own site (interact.sh).
//   - projectdiscovery interactsh's public servers, nuclei's default for -interactsh-server:
//     oast.pro, oast.live, oast.site, oast.online, oast.fun, oast.me, and interact.sh;
//   - PortSwigger's Burp Collaborator: burpcollaborator.net, oastify.com;
//   - DNS and HTTP loggers of the same use: dnslog.cn, ceye.io, requestrepo.com,
//     canarytokens.com (each token's URL alerts whoever made it).
var outOfBand = []string{"oast.pro", "oast.live", "oast.site", "oast.online", "oast.fun", "oast.me", "interact.sh",
	"interactsh.com", "burpcollaborator.net", "oastify.com", "dnslog.cn", "ceye.io", "requestrepo.com", "canarytokens.com"}

// requestCatchers are services that record whatever request reaches them for their user to
// read (webhook.site, Pipedream's RequestBin, requestcatcher.com, Beeceptor): developers test
// webhooks with them, and an injected instruction uses them to receive what a fetch carries.
var requestCatchers = []string{"webhook.site", "requestbin.net", "requestcatcher.com", "pipedream.net", "beeceptor.com",
	"hookbin.com", "ptsv3.com"}

// shorteners are URL shorteners: the name sends the fetch on to an address the URL does not show.
var shorteners = []string{"bit.ly", "tinyurl.com", "t.co", "goo.gl", "is.gd", "v.gd", "ow.ly", "buff.ly", "rebrand.ly",
	"cutt.ly", "shorturl.at", "rb.gy", "tiny.cc", "t.ly", "s.id", "bl.ink", "lnkd.in", "tr.im", "x.co"}

// tunnels expose a machine behind a NAT under a public name: whose machine it is, the name
// does not say.
var tunnels = []string{"ngrok-free.app", "ngrok.app", "loca.lt", "serveo.net", "trycloudflare.com"}

// drops are paste sites and anonymous file drops: anyone uploads a text or a file under a
// throwaway name, with no project or account behind the address (Pastebin, paste.ee, Hastebin,
// dpaste, termbin, ix.io, sprunge, 0x0.st, rentry, paste.rs; transfer.sh, file.io, temp.sh,
// oshi.at, catbox, bashupload, gofile; GitHub's gists, whose raw host serves any account's
// snippet). Attack write-ups stage their second step there.
var drops = []string{"pastebin.com", "paste.ee", "hastebin.com", "hastebin.skyra.pw", "ghostbin.com", "dpaste.org", "dpaste.com",
	"termbin.com", "ix.io", "sprunge.us", "0x0.st", "rentry.co", "rentry.org", "paste.rs", "transfer.sh", "file.io", "temp.sh",
	"oshi.at", "catbox.moe", "bashupload.com", "gofile.io", "anonfiles.com", "gist.github.com", "gist.githubusercontent.com"}

// wildcardDNS are DNS services that resolve a name to the address written in it or to
// loopback (127.0.0.1.nip.io, localtest.me): an IP address in a name's clothes.
var wildcardDNS = []string{"nip.io", "sslip.io", "xip.io", "xip.name", "nip.direct", "traefik.me", "backname.io",
	"localtest.me", "lvh.me", "vcap.me", "localh.st", "1u.ms", "rbndr.us", "fuf.me", "lacolhost.com", "ulh.us"}

// Drop reports whether host is a paste site or an anonymous file drop, or below one.
func Drop(host string) bool { return anyUnder(host, drops, true) }

// WildcardDNS reports whether host is a wildcard DNS service or a name below one.
func WildcardDNS(host string) bool { return anyUnder(host, wildcardDNS, true) }

// Anonymous reports whether what host serves has no project behind its name: a paste site or
// file drop, a name that resolves to the address it spells, or one that redirects or is
// received by whoever holds it (Redirects).
func Anonymous(host string) bool { return Drop(host) || WildcardDNS(host) || Redirects(host) }

// OutOfBand reports whether host (lower case, no port) is a subdomain of an out-of-band
// interaction service: a callback endpoint (abc123.oast.pro, x.burpcollaborator.net).
func OutOfBand(host string) bool { return anyUnder(host, outOfBand, false) }

// RequestCatcher reports whether host is a request-inspection service or one of its endpoints.
func RequestCatcher(host string) bool { return anyUnder(host, requestCatchers, true) }

// Redirects reports whether a fetch of host may end somewhere its name does not show, or is
// received by whoever holds the name: a shortener, a request catcher, an out-of-band service
// (apex included) or a tunnel.
func Redirects(host string) bool {
	return anyUnder(host, shorteners, true) || anyUnder(host, requestCatchers, true) ||
		anyUnder(host, outOfBand, true) || anyUnder(host, tunnels, true)
}

// anyUnder reports whether host is one of domains or below one, on a label boundary; the
// domain itself counts when apex is set.
func anyUnder(host string, domains []string, apex bool) bool {
	host = strings.TrimSuffix(host, ".")
	for _, d := range domains {
		if !strings.HasSuffix(host, d) {
			continue
		}
		if len(host) == len(d) {
			if apex {
				return true
			}
			continue
		}
		if host[len(host)-len(d)-1] == '.' {
			return true
		}
	}
	return false
}
