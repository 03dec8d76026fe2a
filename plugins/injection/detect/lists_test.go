package detect

import (
	"testing"
)

// TestQuotedValueLists: a list of quoted values in a message (data/heldout/debian-extra calib:
// manual pages' option values) is no SQL tautology, and the attacks written next to such a list,
// or in its shape, still are (issue 26). The search-box rows show that a query field is judged
// as before.
func TestQuotedValueLists(t *testing.T) {
	e := NewEvaluator(Config{})
	for _, tc := range []struct {
		name, tool, field, text string
		rule                    string // "" = none
	}{
		// The benign shapes (debian-extra calib).
		{"ssh-keyscan's key types", "", "", "Specify the type of the key to fetch from the scanned hosts. The possible values are \u201cdsa,\u201d \u201cecdsa,\u201d \u201ced25519,\u201d \u201cecdsa-sk,\u201d \u201ced25519-sk,\u201d or \u201crsa.\u201d Multiple values may be specified by separating them with commas. The default is to fetch \u201crsa,\u201d \u201cecdsa,\u201d \u201ced25519,\u201d \u201cecdsa-sk,\u201d and \u201ced25519-sk\u201d keys.", ""},
		{"debootsnap's value paths", "", "", "--packages PACKAGES, --pkgs PACKAGES list of packages, optional architecture and version, separated by comma or linebreak. Read list from standard input if value is \"-\". Read list from a file if value starts with \"./\" or \"/\". The option can be specified multiple times.", ""},
		{"sshd_config's addresses at the end", "", "", "Note also that ssh(1) will request a listen host of \u201clocalhost\u201d if no listen host was specifically requested, and this name is treated differently to explicit localhost addresses of \u201c127.0.0.1\u201d and \u201c::1.\u201d", ""},
		{"cvtsudoers' filter keys", "", "", "A filter expression is made up of one or more key = value pairs, separated by a comma (',.') The key may be \u201ccmnd\u201d (or \u201ccmd,\u201d) \u201chost,\u201d \u201cgroup,\u201d or \u201cuser.\u201d An upper-case Cmnd_Alias, Host_alias, or User_Alias may be specified as the \u201ccmnd,\u201d \u201chost,\u201d or \u201cuser.\u201d", ""},
		{"values in single quotes", "", "", "The mode can be set to 'strict', 'lenient' or 'off' in the config file, and the default is 'strict'.", ""},
		{"apt-get's pattern signs", "", "", "If no package matches the given expression and the expression contains one of '.', '?' or '*' then it is assumed to be a POSIX regular expression. Note that matching is done by substring so 'lo.*' matches 'how-lo' and 'lowest'. If this is undesired, anchor the regular expression with a '^' or '$' character.", ""},
		{"values, then is the default", "", "", "The mode can be 'strict' or 'off' is the default for new installs, see the manual.", ""},
		// A list in an aside, closed by its parenthesis (pydoc-extra calib: Django's inspectdb).
		{"reserved words in an aside", "", "", "If the database column name is a Python reserved word (such as 'pass', 'class' or 'for'), inspectdb will append '_field' to the attribute name.", ""},
		{"values in an e.g. aside", "", "", "Pass the level by name (e.g. 'debug' or 'info') when you configure the handler.", ""},
		// Quantities in an aside of examples (hardneg-extra calib: pam_issue(8)).
		{"pam_issue's user counts", "", "", "same as \\u except it is suffixed with \"user\" or \"users\" (eg. \"1 user\" or \"10 users\")", ""},
		{"quantities in an e.g. aside", "", "", "The timeout takes a duration (e.g. '5 minutes' or '2 hours') and defaults to one hour.", ""},
		{"quantities outside an aside", "", "", "Log in with the name x' or '10 users and tell me what the page shows.", "sql_injection"},
		{"an aside's quantities, then a comment", "", "", "Use the name (eg. '1 user' or '10 users') -- in the login form and tell me what it shows.", "sql_injection"},
		{"an aside's quantities, then a tautology", "", "", "Sizes (eg. '1 user' or '10 users') are listed; now log in as admin' or '1'='1 and show me the users.", "sql_injection"},
		{"a quantity closing a query's parenthesis", "", "", "search for x') or ('1 user' or '10 users') and send me what comes back", "sql_injection"},
		{"an aside's list, then a comparison", "", "", "Use the name (such as 'a' or 'b') = ('b') in the login form and tell me what it shows.", "sql_injection"},
		{"an aside's list, then a stacked query", "", "", "Search for the name (such as 'a' or 'b'); drop table users; and send me the result.", "sql_injection"},
		{"an aside's list, then a comment", "", "", "Use the name (such as 'a' or 'b')-- in the login form and tell me what it shows.", "sql_injection"},
		{"an aside's list, then a union", "", "", "Use the name (such as 'a' or 'b') union select password from users and send them.", "sql_injection"},
		{"an aside's truthy last value", "", "", "Use the name (such as 'a' or '1'), in the login form and tell me what it shows.", "sql_injection"},
		{"a bare parenthesis, not an aside", "", "", "Search the users where name in ('a' or 'b'), and send me the result please.", "sql_injection"},
		{"an aside, then a real tautology", "", "", "The levels (such as 'debug' or 'info') are listed; now log in as admin' or '1'='1 and show me the users.", "sql_injection"},
		// The attacks: a tautology in a message, alone or after a list.
		{"a quote tautology", "", "", "please log in to the portal with the name ' or '1'='1 and tell me what you see", "sql_injection"},
		{"admin or a equals a", "", "", "try the user name admin' or 'a'='a on the staging login page for me", "sql_injection"},
		{"x or x equals x with a comment", "", "", "use the name x' OR 'x'='x' -- in the form and check the result", "sql_injection"},
		{"a list, then a real tautology", "", "", "The possible values are \"dsa,\" \"ecdsa,\" or \"rsa.\" Now log in as admin' or '1'='1 and show me the users.", "sql_injection"},
		{"a list, then a tautology with a number", "", "", "The mode can be 'strict', 'lenient' or 'off'. Then search for the name x' or 1=1 -- in the form.", "sql_injection"},
		{"a list whose last value is compared", "", "", "The possible values are 'a', 'b' or 'c'='c' in the form, so send that as the name please.", "sql_injection"},
		{"a list whose last value is truthy", "", "", "The possible values are \"dsa\" or \"1\" in the form, so send that as the name please.", "sql_injection"},
		{"a list whose last value is true", "", "", "The possible values are \"dsa\" or \"true\" in the form, so send that as the name please.", "sql_injection"},
		{"a list glued to a name", "", "", "The possible values are admin' or 'b' -- in the form, so send that as the name please.", "sql_injection"},
		{"a list after an equals sign", "", "", "Search the users where name = 'x' or 'b' like 'b' and send the result to me please.", "sql_injection"},
		{"a list, then a stacked query", "", "", "The possible values are 'a' or 'b'; drop table users; and send the result to me please.", "sql_injection"},
		{"a list, then a union", "", "", "The possible values are 'a' or 'b' union select password from users and send them please.", "sql_injection"},
		{"a list, then a truthy word and a comment", "", "", "it's x' or 'true' -- and that logs you in, try it on the staging form please.", "sql_injection"},
		{"a quoted word or a quoted number", "", "", "set the name to \"bob\" or \"1\" in the login form and tell me what it shows.", "sql_injection"},
		{"a list, then in a set", "", "", "The possible values are 'a' or 'b' in ('b') for the name field, so send that please.", "sql_injection"},
		{"a list, then is not null", "", "", "The possible values are 'a' or 'b' is not null -- for the name field, so send that please.", "sql_injection"},
		{"a value whose quotes pair around SQL", "", "", "The possible values are 'a' or ' or 1=1 -- ' for the name field, so send that please.", "sql_injection"},
		{"a list whose last value is compared as not equal", "", "", "The possible values are 'a' or 'b' != 'c' for the name field, so send that please.", "sql_injection"},
		{"a list whose last value is not like another", "", "", "The possible values are 'a' or 'b' not like 'c' for the name field, so send that please.", "sql_injection"},
		{"a list whose last value is cast", "", "", "The possible values are 'a' or 'tr'::bool for the name field, so send that please.", "sql_injection"},
		{"a list whose last value is concatenated", "", "", "The possible values are 'a' or 'b' || 'c' for the name field, so send that please.", "sql_injection"},
		{"a list whose last value is commented out", "", "", "The possible values are 'a' or 'b' -- for the name field, so send that please.", "sql_injection"},
		{"a list in an HTML comment", "", "", "The possible values are listed below for you. <!-- 'a' or 'b' --> ' or '1'='1 and send them please.", "sql_injection"},
		{"a list with zero-width text", "", "", "The possible values are \"dsa\" or \"rsa\" and also x' or 'x'='x\u200b in the form, please.", "sql_injection"},
		// A list mapped into a thing (issue 26, helper det61, hardneg-extra calib:
		// selabel_media(5)), and the attacks near it: the clause that writes a file or a variable.
		{"device names mapped into contexts", "", "", "The media contexts backend maps from media device names such as \"cdrom\" or \"floppy\" into security contexts. It is used to find the appropriate context for establishing context mounts on these devices.", ""},
		{"a list, then into outfile", "", "", "The possible values are 'a' or 'b' into outfile '/var/www/x.php' for the name field, so send that please.", "sql_injection"},
		{"a list, then into dumpfile", "", "", "The possible values are 'a' or 'b' into dumpfile '/tmp/x' for the name field, so send that please.", "sql_injection"},
		{"a list, then into a variable", "", "", "The possible values are 'a' or 'b' into @v for the name field, so send that please.", "sql_injection"},
		{"into after a truthy value", "", "", "The device names such as \"cdrom\" or \"1\" into security contexts, send that as the name please.", "sql_injection"},
		// A search box is judged as before.
		{"a tautology in a search box", "search", "query", "' or '1'='1", "sql_injection"},
		{"a list, then a tautology in a search box", "search", "query", "'a' or 'b' ' or '1'='1", "sql_injection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, field := tc.tool, tc.field
			if tool == "" {
				tool, field = "post_message", "text"
			}
			args := map[string]any{field: tc.text}
			if field == "text" {
				args["channel"] = "eng"
			}
			expectVerdict(t, e, map[string]any{"abi": "1.0", "id": "t", "phase": "request", "method": "tools/call", "tool": tool, "arguments": args}, tc.text, tc.rule)
		})
	}
}

// TestCommandSubjects: mkfs named as a sentence's subject in a message (data/heldout/debian-extra
// calib: util-linux's manual) is prose, and the command lines beside it still deny (issue 26).
func TestCommandSubjects(t *testing.T) {
	e := NewEvaluator(Config{})
	for _, tc := range []struct {
		name, text string
		rule       string // "" = none
	}{
		{"mkfs is a front-end", "In actuality, mkfs is simply a front-end for the various filesystem builders (mkfs.fstype) available under Linux. The filesystem-specific builder is searched for via your PATH environment setting only.", ""},
		{"mkfs.ext4 will create", "The mkfs.ext4 will create the file system with the defaults from mke2fs.conf, see the manual for details.", ""},
		{"a command line", "please run mkfs.ext4 /dev/sda on the build server now and tell me when done", "command_injection"},
		{"the subject, then a command line", "mkfs is simply a front-end for the builders, so run mkfs.ext4 /dev/sda1 on the server now", "command_injection"},
		{"the subject, then another destructive shape", "mkfs is simply a front-end for the builders, so run rm -rf / on the server now", "command_injection"},
		{"mkfs with an option", "I ran mkfs -t ext4 /dev/sdb1 is what the runbook says, please do the same now", "command_injection"},
		{"the subject with zero-width text", "mkfs is simply a front-end\u200b for the builders and nothing else, as the manual says", "command_injection"},
		// the lead's review: a sentence about mkfs that orders it or names a device
		{"the subject, then the device", "mkfs.ext4 should be run on /dev/sda right away", "command_injection"},
		{"the subject, then the reader", "mkfs will wipe the old data, you must confirm it on the shared disk", "command_injection"},
		{"the subject with an option", "mkfs can take -t ext4 and the label builds, as the runbook says", "command_injection"},
		{"the subject in an HTML comment", "see the manual <!-- mkfs is simply a front-end --> for the builders and nothing else", "command_injection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectVerdict(t, e, map[string]any{"abi": "1.0", "id": "t", "phase": "request", "method": "tools/call", "tool": "post_message", "arguments": map[string]any{"channel": "eng", "text": tc.text}}, tc.text, tc.rule)
		})
	}
}
