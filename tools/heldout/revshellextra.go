package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The extra reverse- and bind-shell set (issue 26): a calib-only attack set for tuning the shell
// rules on a public list of reverse and bind shells nobody on the team wrote, written by
// `-revshell-extra`. It has no test split. Its lines are the commands of two cheat sheets,
// vendored under data/heldout/revshell-extra/src (MIT, LF line ends, text otherwise unchanged):
// PayloadsAllTheThings' "Methodology and Resources/Bind Shell Cheatsheet.md" and "Methodology
// and Resources/Reverse Shell Cheatsheet.md", the latter at de532030df56, the last version before
// its author moved the sheet to another repository whose licence could not be verified (the
// set's source changed to this pre-move copy after the first measurement; the rule below did not).
//
// Each command is placed where the agent runs it: the command of a Claude Code Bash call
// (transport hook, tool Bash, phase request), labelled command_injection, kind bash_command.
//
// The rule, fixed before the set was measured (revshellCommands): every line of a fenced block
// that is a command a person would type into a Unix shell, or into PowerShell or cmd started
// from one:
//   - blocks tagged bash, sh, shell, powershell or ps1, and untagged blocks: every command line;
//   - blocks tagged with a programming language (perl, python, php, ruby, java, javascript,
//     csharp, rust, go): only the lines that run an interpreter on inline code (`perl -e`,
//     `python -c`, `php -r`, `ruby -e`, `lua -e`, `node -e`, after any leading `export`
//     assignments); a program's source (C, Java, Rust, Dart, Node.js, OGNL, the expanded Python)
//     is code, not a command;
//   - a prompt (`user@victim$ `, `$ `) is cut; a line ending in a backslash is joined with the
//     next (the backslash and line end removed, as the shell does outside quotes);
//   - a bare PowerShell statement (dot-sourcing a script, `IEX(...)`, a Verb-Noun cmdlet, or a
//     function a dot-sourced X.ps1 of the block defines, such as powercat) is placed as
//     `powershell -nop -c "<statement>"` (`"`, `$` and backquotes escaped for the shell).
//
// Skipped: comments, blank lines, label and prose lines ("Victim:", "NOTE: ...", "or", a bare
// URL), the steps on the attacker's side (a prompt naming the attacker, the lines after a
// comment or label naming the attacker or the listener up to the next comment or blank line, a
// listener with no shell attached: `nc -lvnp 4242`, `socat file:`tty`,raw,echo=0
// tcp-listen:4242`, `openssl s_server`/`req`/`rand`, `pwncat -l`, `rlwrap ...`), msfvenom and
// msfconsole (they write a payload FILE on the attacker's host), and the section "Spawn TTY
// Shell" (the steps that upgrade a shell already caught, typed into it or into the attacker's
// terminal: they open no connection). A line that normalizes (normKey) to an earlier one is
// dropped as a duplicate (dropped.jsonl). No other set places a command in a Bash call as an
// attack, so no other set is read.

// revshellFiles are the vendored cheat sheets, under -revshell-src, each with the repository,
// commit and path it was read from.
var revshellFiles = []struct{ Local, Repo, Commit, Path string }{
	{"PayloadsAllTheThings/Reverse Shell Cheatsheet.md", "swisskyrepo/PayloadsAllTheThings",
		"de532030df56fae2e5a4130288a1995d15d46232", "Methodology and Resources/Reverse Shell Cheatsheet.md"},
	{"PayloadsAllTheThings/Bind Shell Cheatsheet.md", "swisskyrepo/PayloadsAllTheThings",
		"78cc68674b67495c5a179164e3900de380aaa4d5", "Methodology and Resources/Bind Shell Cheatsheet.md"},
}

// generateRevshellExtra writes out/calib.jsonl, out/dropped.jsonl and out/COUNTS.md from the
// cheat sheets vendored under src.
func generateRevshellExtra(out, src string, stdout io.Writer) error {
	var attacks []attack
	for _, f := range revshellFiles {
		b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(f.Local)))
		if err != nil {
			return err
		}
		prefix := f.Repo + "@" + f.Commit[:12] + "/" + f.Path
		revshellCommands(string(b), func(cmd string, line int) {
			attacks = append(attacks, attack{label: "command_injection", text: cmd, shell: true,
				source: prefix + ":" + strconv.Itoa(line)})
		})
	}
	recs, dropped := placeAttacks(attacks, dropRepeats(nil, "", func(attack) string { return "" }))
	return writeExtraSet(out, "# Extra reverse and bind shell set (calib only): counts\n\nWritten by `make heldout-revshell-extra`", recs, dropped, stdout)
}

var (
	// revshellShellLangs: blocks whose every command line is read.
	revshellShellLangs = map[string]bool{"": true, "bash": true, "sh": true, "shell": true, "powershell": true, "ps1": true}
	// revshellPrompt: a shell prompt before a command (user@host:dir$ or $); group 1 the user@host.
	revshellPrompt = regexp.MustCompile(`^(?:([\w.-]+@[\w.-]+)(?::\S*)?\$|\$)\s+`)
	// revshellInline: an interpreter run on inline code, after any leading export assignments.
	revshellInline = regexp.MustCompile(`^(?:export\s+\w+=\S*\s*;\s*)*(?:perl|python[0-9.]*|python\.exe|php|ruby|lua[0-9.]*|node|nodejs)\s+(?:-\S+\s+)*-(?:e|c|r|E)\b`)
	// revshellLabel: a label or prose line, not a command.
	revshellLabel = regexp.MustCompile(`(?i)^(\S+:|note\b|or$|and$|https?://\S+$|in \w+ machine\b.*:$)`)
	// revshellListener: one step that only sets up the attacker's side.
	revshellListener = regexp.MustCompile(`(?i)^(?:(?:nc|ncat|netcat)\s+(?:-\S*\s+)*-\w*l\w*(?:\s+\S+)*|socat\s+file:` + "`tty`" + `\S*\s+\S+|openssl\s+(?:s_server|req|rand)\b.*|pwncat\s+-l\b.*|rlwrap\b.*|msfvenom\b.*|msfconsole\b.*|export\s+\w+=\S*)$`)
	// revshellAttachesShell: a listener that runs a shell for whoever connects is a bind shell.
	revshellAttachesShell = regexp.MustCompile(`(?i)(?:^|\s)-[ec]\b|\bexec:|\bsystem:`)
	// revshellPSStatement: a bare PowerShell statement (not a Unix command).
	revshellPSStatement = regexp.MustCompile(`^(?:\.\s+\S+\.ps1\b|iex\b|IEX\b|[A-Z][a-z]+-[A-Z][A-Za-z]+\b)`)
	// revshellDotSource: a dot-sourced script, whose name is the function it defines.
	revshellDotSource = regexp.MustCompile(`^\.\s+(?:\S*[\\/])?([\w-]+)\.ps1\b`)
	// revshellAttacker: a comment, label or prompt host that names the attacker's side.
	revshellAttacker = regexp.MustCompile(`(?i)\b(attacker|attack|listener)\b`)
	// attackerWords: a label before a block that names the attacker's side or its listener.
	attackerWords = regexp.MustCompile(`(?i)\b(attacker|server side|listener)\b`)
	// msfPayload: msfvenom or msfconsole first, writing a payload file on the attacker's host.
	msfPayload = regexp.MustCompile(`^(?:msfvenom|msfconsole)\b`)
	// ipPlaceholder: the sheet's <Your_IP> placeholder (in bash a redirection), filled with the
	// address the sheet uses everywhere else.
	ipPlaceholder = regexp.MustCompile(`<\w*(?:IP|Ip|ip)\w*>`)
	// stepSep splits a command line into its steps.
	stepSep = regexp.MustCompile(`;|&&|\|`)
)

// revshellCommands calls add with each command of the Markdown cheat sheet src and its line
// number (the first line of a joined command), by the rule in the file's doc.
func revshellCommands(src string, add func(cmd string, line int)) {
	lines := strings.Split(src, "\n")
	inBlock, lang, skipSection, attackerSide, attackerBlock := false, "", false, false, false
	label := "" // the last text line before a block
	psFuncs := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if !inBlock && strings.HasPrefix(t, "## ") {
			skipSection = strings.HasPrefix(strings.ToLower(t), "## spawn tty shell")
			continue
		}
		if strings.HasPrefix(t, "```") {
			inBlock = !inBlock
			lang = strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, "`")))
			attackerSide, psFuncs = false, map[string]bool{}
			attackerBlock = inBlock && strings.HasSuffix(label, ":") && attackerWords.MatchString(label)
			continue
		}
		if !inBlock {
			if t != "" {
				label = t
			}
			continue
		}
		if skipSection {
			continue
		}
		start := i + 1
		switch {
		case t == "":
			attackerSide = false
			continue
		case strings.HasPrefix(t, "#"):
			attackerSide = revshellAttacker.MatchString(t) && !strings.Contains(strings.ToLower(t), "victim")
			continue
		}
		cmd, victim := t, false
		if m := revshellPrompt.FindStringSubmatch(cmd); m != nil {
			host := m[1][strings.Index(m[1], "@")+1:]
			if revshellAttacker.MatchString(host) {
				continue
			}
			victim = strings.HasPrefix(strings.ToLower(host), "victim")
			cmd = cmd[len(m[0]):]
		}
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + strings.TrimSpace(lines[i])
		}
		if revshellLabel.MatchString(cmd) {
			attackerSide = revshellAttacker.MatchString(cmd) && !strings.Contains(strings.ToLower(cmd), "victim")
			continue
		}
		if (attackerSide || attackerBlock) && !victim || listenerOnly(cmd) || msfPayload.MatchString(cmd) {
			continue
		}
		cmd = ipPlaceholder.ReplaceAllString(cmd, "10.0.0.1")
		if !revshellShellLangs[lang] {
			if revshellInline.MatchString(cmd) {
				add(cmd, start)
			}
			continue
		}
		if m := revshellDotSource.FindStringSubmatch(cmd); m != nil {
			psFuncs[strings.ToLower(m[1])] = true
		}
		first := strings.ToLower(strings.Fields(cmd)[0])
		if revshellPSStatement.MatchString(cmd) || psFuncs[first] {
			cmd = `powershell -nop -c "` + strings.NewReplacer(`"`, `\"`, `$`, `\$`, "`", "\\`").Replace(cmd) + `"`
		}
		add(cmd, start)
	}
}

// listenerOnly reports whether every step of cmd (split at ;, && and |) only sets up the
// attacker's side (revshellListener) and none runs a shell for whoever connects.
func listenerOnly(cmd string) bool {
	if revshellAttachesShell.MatchString(cmd) {
		return false
	}
	for _, step := range stepSep.Split(cmd, -1) {
		if s := strings.TrimSpace(step); s != "" && !revshellListener.MatchString(s) {
			return false
		}
	}
	return true
}
