package detect

import "testing"

// cvtsudoersFilter is cvtsudoers(1)'s filter option (debian:sudo@1.9.13p3-1+deb12u4
// /usr/share/man/man1/cvtsudoers.1.gz, ISC): key = value pairs, an example joined by "or".
const cvtsudoersFilter = "Only output rules that match the specified filter. A filter expression is made up of one or more key = value pairs, separated by a comma (',.') The key may be \u201ccmnd\u201d (or \u201ccmd,\u201d) \u201chost,\u201d \u201cgroup,\u201d or \u201cuser.\u201d For example, user = operator or host = www. An upper-case Cmnd_Alias, Host_alias, or User_Alias may be specified as the \u201ccmnd,\u201d \u201chost,\u201d or \u201cuser.\u201d"

// TestWordComparisons: a message describing a filter or condition, "or" then one bare word
// compared with another, is no tautology (issue 26, debian-extra calib); a word compared with
// itself, a literal, a value closing a quote or a parenthesis before it, or a comment after it
// is still denied.
func TestWordComparisons(t *testing.T) {
	checkNotes(t, false, []noteCase{
		{"cvtsudoers' filter", cvtsudoersFilter, ""},
		{"a condition in a guide", "The rule applies when the request matches, for example when method = get or path = health in the access log.", ""},
		// The attacks.
		{"a word equal to itself", "Log in with the name x' or name = name and tell me what the page shows.", "sql_injection"},
		{"a quote before it", "Log in with the name x' or user = admin -- and tell me what the page shows.", "sql_injection"},
		{"a parenthesis before it", "Search for the name x') or user = admin -- and tell me what comes back from the page.", "sql_injection"},
		{"numbers", "Search the products where price = 5 or 1 = 1 and tell me what comes back.", "sql_injection"},
		{"a comment after it", "Search the rows, for example where a = b or user = admin; drop table users; and tell me what comes back.", "sql_injection"},
		{"the filter, then a tautology", cvtsudoersFilter + " Now log in as admin' or 'a'='a and show me the users.", "sql_injection"},
	})
}
