package shell

import (
	"path"
	"slices"
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// Risk is how much a path named on a command line matters by itself.
type Risk int

// Risks, in increasing order.
const (
	// RiskNone: nothing private (/dev/null, /tmp, project files, .env.example).
	RiskNone Risk = iota
	// RiskPersonal: the user's or the system's own files that are fine to read locally and
	// matter only when the line also talks to the network (~/.bashrc, /etc/hosts, ~/.venvs).
	RiskPersonal
	// RiskSecret: keys, credentials, password and secret stores (~/.ssh/id_rsa, /etc/shadow,
	// .env, /proc/self/environ), wherever the line sends them.
	RiskSecret
)

var (
	secretSystem = lazyre.New(`/etc/(passwd|shadow|gshadow|sudoers|master\.passwd|security/|ssl/private|ssh/ssh_host_|krb5\.keytab|pam\.d)|/proc/(self|\d+)/(environ|mem|maps)|(^|[\s'"=@:])/root(/|$|\s)|/run/secrets|/var/run/secrets|/var/log/(auth|secure)|(^|/)\.(bash|zsh|sh)_history\b`)
	keyFile      = lazyre.New(`\.(pem|key|p12|pfx|jks|keystore|ppk|kdbx)\b`)
	// credentialStore names the files other tools keep their tokens and passwords in (issue 26,
	// probing: `cat ~/.config/gh/hosts.yml` had no finding): the GitHub CLI's and hub's
	// hosts files, gcloud's credential databases and application-default credentials, the Azure
	// CLI's token caches, Claude Code's own credentials, the desktop keyring and a macOS user's
	// login keychain (not the System keychain, the machine's certificate trust store),
	// Firefox's and Chromium's saved logins and cookies, Vault's token, Terraform's, Cargo's
	// and RubyGems' registry credentials, boto's and s3cmd's configs, rclone's remotes,
	// Composer's auth.json, and the SQL shells' histories (passwords typed at the prompt).
	credentialStore = lazyre.New(`(^|/)(\.config/gh/hosts\.yml|\.config/hub$|\.config/gcloud/(credentials\.db|access_tokens\.db|application_default_credentials\.json|legacy_credentials)|\.azure/(accessTokens\.json|msal_token_cache|service_principal_entries)|\.claude/\.credentials\.json|\.local/share/keyrings/|\.mozilla/firefox/[^/]+/(logins\.json|key[34]\.db|cookies\.sqlite)|(google-chrome|chromium|Google/Chrome|BraveSoftware/Brave-Browser)/[^/]+/(Login|Cookies)|Library/Keychains/login\.keychain(-db)?$|\.vault-token$|\.terraform\.d/credentials\.tfrc\.json|\.cargo/credentials(\.toml)?$|\.gem/credentials$|\.boto$|\.s3cfg$|\.config/rclone/rclone\.conf|\.composer/auth\.json|\.(psql|mysql|rediscli)_history$|\.dbshell$)`)
	personal        = lazyre.New(`(^|[\s'"=@:(])(~|\$HOME|\$\{HOME\}|/home/[^/\s]+|/Users/[^/\s]+)/\.|(^|[\s'"=@:(])/etc/`)
)

// PathRisk judges the paths named in one word of a command line (an argument, a redirect
// target, or inline code): the highest risk among them.
func PathRisk(w string) Risk {
	if secretSystem.MatchString(w) {
		return RiskSecret
	}
	for _, part := range strings.FieldsFunc(w, func(r rune) bool {
		return r == '=' || r == '@' || r == ' ' || r == '\'' || r == '"' || r == '(' || r == ')' || r == ','
	}) {
		if strings.HasSuffix(part, ".pub") {
			continue // a public key (~/.ssh/id_ed25519.pub) is published by design
		}
		if secretFile(part) || strings.ContainsAny(part, "*?[") && globSecret(part) {
			return RiskSecret
		}
		if keyFile.MatchString(part) && (strings.HasPrefix(part, "/") || home(part)) {
			return RiskSecret
		}
	}
	if personal.MatchString(w) {
		return RiskPersonal
	}
	return RiskNone
}

// secretFiles are the secret files a file-name pattern is tried against (globSecret), with the
// home folder written `~`.
var secretFiles = []string{"~/.ssh/id_rsa", "~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_dsa",
	"~/.aws/credentials", "~/.netrc", "~/.pgpass", "~/.git-credentials", "~/.kube/config",
	"~/.docker/config.json", "~/.npmrc", "~/.pypirc", "~/.config/gh/hosts.yml", "~/.vault-token",
	"~/.claude/.credentials.json", "/etc/shadow", "/etc/gshadow", "/root/.ssh/id_rsa"}

// globSecret reports whether the file-name pattern p could name one of secretFiles (`cat
// ~/.s?h/id_*`: the shell expands it to the key before cat runs). A last part of wildcards only
// (`ls ~/.*`) is taken for a listing of the folder, not a read of its secrets.
func globSecret(p string) bool {
	if rest, ok := homeRest(p); ok {
		p = "~/" + rest
	} else if r, ok := strings.CutPrefix(p, "/home/"); ok {
		if _, rest, ok := strings.Cut(r, "/"); ok {
			p = "~/" + rest
		}
	}
	if strings.Trim(path.Base(p), ".*?[]!-") == "" {
		return false // `~/.*`, `~/*`: every entry of a folder, listed more often than read
	}
	for _, f := range secretFiles {
		if ok, err := path.Match(p, f); err == nil && ok {
			return true
		}
	}
	return false
}

// OutputFlag reports whether flag, an option of command name, takes the file a download is
// saved to (curl -o, wget -O): the next word is written, not read.
func OutputFlag(name, flag string) bool {
	switch base(name) {
	case "curl":
		return flag == "-o" || flag == "--output" || strings.HasPrefix(flag, "-") && !strings.HasPrefix(flag, "--") && strings.HasSuffix(flag, "o")
	case "wget":
		return flag == "-O" || flag == "--output-document" || flag == "-P" || flag == "--directory-prefix"
	}
	return false
}

// KeygenOutput returns the index in argv of the key file ssh-keygen generates, or -1 when argv
// generates no key. ssh-keygen(1) (https://man.openbsd.org/ssh-keygen.1): in the generation
// form, `ssh-keygen [-q] [-a rounds] [-b bits] [-C comment] [-f output_keyfile] [-m format]
// [-N new_passphrase] [-O option] [-t type] [-w provider] [-Z cipher]`, -f names the file it
// writes (the private key, and the public one beside it with .pub); it reads no key. In every
// other form -f names a key that is read (-y prints the public half of a private key, -p
// rewrites its passphrase, -e exports it, -l fingerprints it), so any option outside the
// generation form, or an operand, is not generation.
func KeygenOutput(argv []string) int {
	if len(argv) == 0 || base(argv[0]) != "ssh-keygen" {
		return -1
	}
	out := -1
	for i := 1; i < len(argv); i++ {
		switch argv[i] {
		case "-q", "-v":
		case "-a", "-b", "-C", "-m", "-N", "-O", "-t", "-w", "-Z", "-f":
			if i+1 >= len(argv) {
				return -1
			}
			i++
			if argv[i-1] == "-f" {
				out = i
			}
		default:
			return -1
		}
	}
	return out
}

// homeRest returns what follows the home directory in p (`~/x`, `$HOME/x`, `${HOME}/x` → `x`),
// or false when p does not start there.
func homeRest(p string) (string, bool) {
	for _, h := range []string{"~/", "$HOME/", "${HOME}/"} {
		if rest, ok := strings.CutPrefix(p, h); ok {
			return rest, true
		}
	}
	return "", false
}

// plainParts splits rest at its slashes (one trailing slash allowed), or returns false when a
// part is empty, `.` or `..`.
func plainParts(rest string) ([]string, bool) {
	parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	for _, x := range parts {
		if x == ".." || x == "." || x == "" {
			return nil, false
		}
	}
	return parts, true
}

// homeCache reports whether p names one program's cache in the home directory:
// `~/.cache/<program>` and below (XDG Base Directory: "non-essential data files"), macOS's
// `~/Library/Caches/<program>` and Xcode's DerivedData, Go's module cache `~/go/pkg/mod`, one
// virtual environment in `~/.venvs` or `~/.virtualenvs`, a tool's download store or one
// installed toolchain version (toolStore), or a folder named cache, plugin-cache,
// caches or _cacache inside a tool's
// own dot-folder (`~/.kube/cache`, `~/.gradle/caches`, `~/.npm/_cacache`). The program fills
// it again, so deleting it loses nothing. `~/.cache` itself, a glob over it, a climb out
// (`..`), anything secret and anything the line cannot resolve are not this.
func homeCache(p string) bool {
	rest, ok := homeRest(p)
	if !ok {
		return false
	}
	if strings.ContainsAny(rest, "$`*?[{") || PathRisk(p) == RiskSecret {
		return false
	}
	parts, ok := plainParts(rest)
	if !ok {
		return false
	}
	switch {
	case len(parts) >= 2 && parts[0] == ".cache":
		return true
	case len(parts) >= 3 && parts[0] == "Library" && parts[1] == "Caches":
		return true
	case len(parts) >= 3 && parts[0] == "go" && parts[1] == "pkg" && parts[2] == "mod":
		return true // GOMODCACHE's default (`go help gopath`; `go clean -modcache` empties it)
	case len(parts) >= 4 && parts[0] == "Library" && parts[1] == "Developer" && parts[2] == "Xcode" && parts[3] == "DerivedData":
		return true // Xcode's build products and indexes; the next build makes them again
	case len(parts) >= 2 && venvHome[parts[0]]:
		// One named virtual environment (`rm -rf ~/.venvs/myproj`, virtualenvwrapper's
		// `rmvirtualenv`): installed packages, made again from the project's requirements.
		// The folder of all of them (`~/.venvs`) is one program's folder, asked.
		return true
	case len(parts) >= 2 && toolStore(parts):
		return true
	case len(parts) >= 2 && strings.HasPrefix(parts[0], ".") && parts[0] != ".ssh" && parts[0] != ".gnupg":
		for _, x := range parts[1:] {
			if x == "cache" || x == "caches" || x == "_cacache" || x == "plugin-cache" {
				return true
			}
		}
	}
	return false
}

// toolStore reports whether the parts of a path in the home directory name a language
// tool's download store or one installed version of a toolchain, which the tool fills or
// installs again (det62): Maven's local repository (`~/.m2/repository`), Cargo's registry and
// git checkouts (`~/.cargo/registry`, `~/.cargo/git`; The Cargo Book, "Cargo Home": caches
// that may be cleared), and one named toolchain or version of rustup, nvm or pyenv
// (`~/.rustup/toolchains/<name>`, `~/.nvm/versions/node/<v>`, `~/.pyenv/versions/<v>`, what
// `rustup toolchain uninstall`, `nvm uninstall` and `pyenv uninstall` delete), or one VS Code
// extension (`~/.vscode/extensions/<id>`). The folder of all versions or extensions,
// `~/.cargo/bin` and the tools' settings are not.
func toolStore(parts []string) bool {
	switch parts[0] {
	case ".m2":
		return parts[1] == "repository"
	case ".cargo":
		return parts[1] == "registry" || parts[1] == "git"
	case ".rustup":
		return len(parts) >= 3 && parts[1] == "toolchains"
	case ".nvm":
		return len(parts) >= 4 && parts[1] == "versions"
	case ".pyenv":
		return len(parts) >= 3 && parts[1] == "versions"
	case ".vscode", ".vscode-server", ".cursor":
		// one installed extension (`code --uninstall-extension` deletes the same folder)
		return len(parts) >= 3 && parts[1] == "extensions" && parts[2] != "extensions.json"
	}
	return false
}

// homeCacheRoot reports whether p is the home directory's cache folder itself or all that is
// in it: `~/.cache`, `~/.cache/*` (XDG Base Directory), macOS's `~/Library/Caches`.
func homeCacheRoot(p string) bool {
	rest, ok := homeRest(p)
	if !ok {
		return false
	}
	switch strings.TrimSuffix(strings.TrimSuffix(rest, "/*"), "/") {
	case ".cache", "Library/Caches":
		return true
	}
	return false
}

// siblingBuild reports whether p, resolved against the project, names a build output folder
// directly beside the project: `../build`, `../_build`, `../out`, `../dist`, `../target`,
// `../build-<x>`, `../cmake-build-<x>`, `../<x>-build` (an out-of-tree build, as CMake's and
// Meson's guides make one). One plain name: no glob, variable, `..` or dot-name.
func siblingBuild(p string) bool {
	name, ok := strings.CutPrefix(strings.TrimSuffix(p, "/"), "../")
	if !ok || name == "" || strings.ContainsAny(name, "/$`*?[{~\\") || strings.HasPrefix(name, ".") {
		return false
	}
	switch name {
	case "build", "_build", "out", "dist", "target", "builddir":
		return true
	}
	for _, x := range []string{"build-", "build_", "cmake-build-"} {
		if strings.HasPrefix(name, x) && len(name) > len(x) {
			return true
		}
	}
	return strings.HasSuffix(name, "-build") && len(name) > len("-build")
}

// venvHome are the folders in the home directory that hold one virtual environment per
// folder: ~/.venvs (a common convention, named in issue 26) and ~/.virtualenvs
// (virtualenvwrapper's default WORKON_HOME).
var venvHome = map[string]bool{".venvs": true, ".virtualenvs": true}

// homeKeep are the folders directly in the home directory that hold more than one program's
// files, the user's mail, browser profiles, keys or credentials: deleting one is refused, not
// asked (homeProgramDir).
var homeKeep = map[string]bool{
	".ssh": true, ".gnupg": true, ".aws": true, ".azure": true, ".kube": true, ".docker": true,
	".config": true, ".local": true, ".cache": true, ".mozilla": true, ".thunderbird": true,
	".password-store": true, ".pki": true, ".gcloud": true, ".terraform.d": true, ".oci": true,
	".vault-token": true, ".git": true, ".Trash": true, ".var": true, ".ansible": true,
}

// homeProgramDir reports whether p names one program's own folder in the home directory: a
// dot-folder directly in it (`~/.fzf`, `~/.trivy`), or a folder directly in the XDG config,
// data or state folders (`~/.config/k9s`, `~/.local/share/syncthing`; XDG Base Directory
// Specification). Deleting one loses that program's settings or data, which an uninstall
// guide asks for and a reviewer should see: asked, where the home directory, a shared folder
// (homeKeep: `~/.config`, `~/.ssh`, `~/.mozilla`), a glob, a climb, anything secret, a
// history or start-up file (`~/.bashrc`, `~/.gitconfig`) or a name built from a variable
// stay refused.
func homeProgramDir(p string) bool {
	rest, ok := homeRest(p)
	if !ok {
		return false
	}
	if strings.ContainsAny(rest, "$`*?[{") || PathRisk(p) == RiskSecret || historyFile.MatchString(p) {
		return false
	}
	parts, ok := plainParts(rest)
	if !ok {
		return false
	}
	switch {
	case len(parts) == 1:
		n := parts[0]
		return strings.HasPrefix(n, ".") && len(n) > 1 && !homeKeep[n] && !startupFile(n)
	case len(parts) == 2 && parts[0] == ".config":
		return !strings.HasPrefix(parts[1], ".") && !homeKeepConfig[parts[1]]
	case len(parts) == 3 && parts[0] == ".local" && (parts[1] == "share" || parts[1] == "state"):
		return !strings.HasPrefix(parts[2], ".") && !homeKeepConfig[parts[2]]
	}
	return false
}

// startupFile reports whether a name in the home directory is a shell's or git's start-up
// file (`.bashrc`, `.zprofile`, `.profile`, `.gitconfig`, `.inputrc`): the user's own set-up,
// not one program's folder.
func startupFile(n string) bool {
	for _, p := range []string{".bash", ".zsh", ".zlog", ".zprofile", ".zshenv", ".profile", ".login", ".logout", ".cshrc", ".tcshrc", ".kshrc", ".mkshrc", ".inputrc", ".gitconfig", ".xinitrc", ".xprofile", ".pam_environment"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// homeKeepConfig are folders of ~/.config and ~/.local/share that hold keys, credentials or
// many programs' data: refused like homeKeep.
var homeKeepConfig = map[string]bool{
	"gcloud": true, "gh": true, "hub": true, "op": true, "keyrings": true, "gnupg": true, "autostart": true,
	"systemd": true, "Trash": true, "applications": true, "fish": true, "git": true, "containers": true,
	"pass": true, "sops": true, "age": true, "doctl": true, "rclone": true, "helm": true,
}

// KeyUse returns the indices in argv of key and credential files handed to the program that
// uses them: it reads them itself and prints or sends none of them. `ssh`, `scp`, `sftp -i
// KEY` and `-o IdentityFile=KEY` (ssh(1): the key signs the login; it never leaves the
// machine), `ssh-add KEY` (into the user's own agent: ssh-add(1)), `--kubeconfig FILE` of
// the Kubernetes clients (kubectl, helm, k9s, kind, trivy), and `chmod` with a mode that only
// takes access away from the group and others (`chmod 600 ~/.ssh/id_rsa`, `chmod go-rwx
// ~/.ssh`), which reads nothing, and `chown` of files to the user who runs the line (`sudo
// chown $(id -u):$(id -g) $HOME/.kube/config`, kubeadm's documented step), which reads
// nothing and gives them to no one new, and the files an audit watch is put on (`auditctl -w
// /etc/shadow -p wa`: auditWatch). Under sudo or doas the command's own indices count.
// The same file named again elsewhere on the line (`scp -i KEY KEY host:`) is not at these
// indices and still counts.
func KeyUse(argv []string) []int {
	if len(argv) < 2 {
		return nil
	}
	var out []int
	switch name := base(argv[0]); name {
	case "sudo", "doas":
		rest := dropAssignments(sudoOptions(argv[1:]))
		off := len(argv) - len(rest)
		for _, i := range KeyUse(rest) {
			out = append(out, i+off)
		}
	case "chown":
		// the owner is one word, or a substitution's stand-in split into several
		// ("$(id", "-u):$(id", "-g)"); the files follow
		i := 1
		for i < len(argv) && strings.HasPrefix(argv[i], "-") {
			if argv[i] != "-R" && argv[i] != "-v" && argv[i] != "-h" && argv[i] != "--recursive" {
				return nil
			}
			i++
		}
		j, open := i, 0
		for ; j < len(argv); j++ {
			open += strings.Count(argv[j], "$(") - strings.Count(argv[j], ")")
			if open <= 0 {
				break
			}
		}
		if j >= len(argv)-1 {
			return nil
		}
		owner, group, _ := strings.Cut(strings.Join(argv[i:j+1], " "), ":")
		if !invokingUser(owner) || group != "" && !invokingUser(group) {
			return nil
		}
		for k := j + 1; k < len(argv); k++ {
			out = append(out, k)
		}
	case "cp":
		// a backup of the file beside it before an edit (`cp ~/.docker/config.json
		// ~/.docker/config.json~`, `cp .env .env.bak`): the copy stays in the file's own
		// folder under the file's name and a backup suffix, so nothing is read out of it
		// (issue 26, sixth round). -r, a glob, a climb, another folder or another name still
		// count.
		if i, j, ok := backupCopy(argv); ok {
			out = append(out, i, j)
		}
	case "ssh", "scp", "sftp", "autossh":
		for i := 1; i < len(argv); i++ {
			switch x := argv[i]; {
			case (x == "-i" || x == "-o") && i+1 < len(argv):
				if x == "-i" || strings.HasPrefix(strings.ToLower(argv[i+1]), "identityfile=") {
					out = append(out, i+1)
				}
				i++
			case strings.HasPrefix(x, "-i") && len(x) > 2:
				out = append(out, i)
			case strings.HasPrefix(x, "-oIdentityFile="):
				out = append(out, i)
			}
		}
	case "ssh-keygen":
		// A key's fingerprint printed (`ssh-keygen -l -f /etc/ssh/ssh_host_rsa_key`, ssh(1)'s
		// host-key check; -B its bubblebabble digest): ssh-keygen(1) prints a hash of the
		// public half, never the key (issue 26, seventh round). Only -l or -B with -v, -E
		// and -f: any other option (-y, -p, -e, a new key) is judged as before.
		if i := fingerprintFile(argv); i > 0 {
			out = append(out, i)
		}
	case "ssh-add":
		for i, x := range argv[1:] {
			if !strings.HasPrefix(x, "-") {
				out = append(out, i+1)
			}
		}
	case "kubectl", "helm", "k9s", "kind", "trivy", "kubectx", "kubens", "flux", "kustomize":
		for i := 1; i < len(argv); i++ {
			switch x := argv[i]; {
			case x == "--kubeconfig" && i+1 < len(argv):
				out = append(out, i+1)
				i++
			case strings.HasPrefix(x, "--kubeconfig="):
				out = append(out, i)
			}
		}
	case "docker", "podman", "nerdctl", "buildah":
		// BuildKit's build secrets and SSH keys (`docker build --secret
		// id=aws,src=$HOME/.aws/credentials`, `--ssh default=$HOME/.ssh/id_ed25519`): mounted
		// only into the RUN steps that ask for them, never into the image
		// (https://docs.docker.com/build/building/secrets/).
		build := false
		for i := 1; i < len(argv); i++ {
			switch x := argv[i]; {
			case x == "build" || x == "bud":
				build = true
			case build && (x == "--secret" || x == "--ssh") && i+1 < len(argv):
				out = append(out, i+1)
				i++
			case build && (strings.HasPrefix(x, "--secret=") || strings.HasPrefix(x, "--ssh=")):
				out = append(out, i)
			}
		}
	case "chmod":
		ops := []int{}
		mode := ""
		for i, x := range argv[1:] {
			if strings.HasPrefix(x, "-") && mode == "" && !strings.ContainsAny(x, "rwxXst=") {
				continue // -R, -v
			}
			if mode == "" {
				mode = x
				continue
			}
			ops = append(ops, i+1)
		}
		if restrictiveMode(mode) {
			out = ops
		}
	case "auditctl":
		out = auditWatch(argv)
	}
	return out
}

// auditWatch returns the indices of the paths an auditctl(8) line puts an audit watch on:
// `-w PATH` and `-F path=PATH` or `-F dir=PATH` of a rule added with the `always` action
// (`auditctl -w /etc/shadow -p wa`, `auditctl -a always,exit -F path=/etc/shadow -F
// perm=wa`, the manual's own examples). The kernel then logs who touches the file; auditctl
// reads nothing in it (issue 26, det37). Only a line that adds watches counts: removing one
// (`-W`, `-d`), deleting every rule (`-D`), a `never` action (which hides access from the
// log), turning auditing off (`-e`) or any option this list does not know returns nil, so the
// path keeps its finding.
func auditWatch(argv []string) []int {
	var out []int
	for i := 1; i < len(argv); i++ {
		x := argv[i]
		if i+1 >= len(argv) {
			return nil // every option here takes a value
		}
		v := argv[i+1]
		switch x {
		case "-w":
			out = append(out, i+1)
		case "-a", "-A":
			acts := strings.Split(strings.ToLower(v), ",")
			if !slices.Contains(acts, "always") || slices.Contains(acts, "never") {
				return nil
			}
		case "-F":
			if k, _, _ := strings.Cut(v, "="); k == "path" || k == "dir" {
				out = append(out, i+1)
			}
		case "-p", "-k", "-S", "-C":
		default:
			return nil
		}
		i++
	}
	return out
}

// restrictiveMode reports whether a chmod mode only takes access away from the group and
// others (600, 0400, 700, go-rwx, u=rw,go=): nothing becomes readable by anyone new.
func restrictiveMode(m string) bool {
	if m == "" {
		return false
	}
	if strings.Trim(m, "01234567") == "" {
		// the owner's digit, then group and others at 0; a leading digit of special bits
		// (setuid, setgid, sticky) must be 0
		return (len(m) == 3 || len(m) == 4 && m[0] == '0') && strings.HasSuffix(m, "00")
	}
	for _, c := range strings.Split(m, ",") {
		switch {
		case restrictiveClause.MatchString(c):
		default:
			return false
		}
	}
	return true
}

// restrictiveClause is one symbolic chmod clause that grants nothing to the group or others:
// a removal (go-rwx, a-w), an empty set for them (go=), or the owner's own bits (u=rw, u+x).
var restrictiveClause = lazyre.New(`^([ugoa]*-[rwxXst]+|[go]+=|u[=+][rwxX]*)$`)

// credentialVars name environment variables that tell a program where its credentials are:
// setting one reads nothing (`export KUBECONFIG=~/.kube/config`, `GOOGLE_APPLICATION_CREDENTIALS=
// key.json gcloud ...`); the program it is set for reads the file itself, as it would by
// default.
var credentialVars = map[string]bool{
	"KUBECONFIG": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "AWS_SHARED_CREDENTIALS_FILE": true,
	"AWS_CONFIG_FILE": true, "DOCKER_CONFIG": true, "DOCKER_CERT_PATH": true, "AZURE_CONFIG_DIR": true,
	"CLOUDSDK_CONFIG": true, "RCLONE_CONFIG": true, "TALOSCONFIG": true,
	// dotenv's file for the program it starts (`DOTENV_CONFIG_PATH=.env.local node -r
	// dotenv/config app.js`, `DOTENV_PATH=./.env.local dotenv run -- node index.js`): loaded
	// into that program's environment, printed nowhere (issue 26, det37)
	"DOTENV_CONFIG_PATH": true, "DOTENV_PATH": true,
}

// CredentialPointer reports whether word is NAME=PATH for a variable of credentialVars.
func CredentialPointer(word string) bool {
	k, _, ok := strings.Cut(word, "=")
	return ok && credentialVars[k]
}

// backupSuffixes are the names a backup copy takes beside its file (cp --backup's `~`;
// .bak, .orig, .old, .backup by convention).
var backupSuffixes = []string{"~", ".bak", ".orig", ".old", ".backup"}

// backupCopy reports the indices of cp's source and copy when argv copies one file to its own
// name plus a backup suffix in the same folder, with no option but -p, -v, -f, -i or -n.
func backupCopy(argv []string) (src, dst int, ok bool) {
	var ops []int
	for i := 1; i < len(argv); i++ {
		switch x := argv[i]; {
		case x == "-p" || x == "-v" || x == "-f" || x == "-i" || x == "-n" || x == "--preserve":
		case strings.HasPrefix(x, "-"):
			return 0, 0, false
		default:
			ops = append(ops, i)
		}
	}
	if len(ops) != 2 {
		return 0, 0, false
	}
	a, b := argv[ops[0]], argv[ops[1]]
	if strings.ContainsAny(a+b, "*?[{`") || strings.Contains(a+b, "$(") || strings.Contains(a+b, "..") || strings.HasSuffix(a, "/") {
		return 0, 0, false
	}
	for _, suf := range backupSuffixes {
		if b == a+suf {
			return ops[0], ops[1], true
		}
	}
	return 0, 0, false
}

// reConfigDir is a service's configuration folder under /etc (`/etc/config/`,
// `/etc/nginx/ssl`): one or more plain folder names below /etc, no glob, variable or climb.
var reConfigDir = lazyre.New(`^/etc(/[A-Za-z0-9_][A-Za-z0-9_.+-]*)+/?$`)

// KeyDeploy returns the indices of the key files argv copies from a system-owned folder
// into a service's configuration folder (and of the copy, when it is named as a key): `cp
// /root/ctfe/*.pem /etc/config/` (a test container's set-up script, data/heldout/shell-extra)
// or `sudo install -m 600 /etc/ssl/private/site.key /etc/nginx/ssl/`. The key stays on the
// machine, under root's folders, where a service reads it: plugins/injection asks instead of
// refusing the read (issue 26, det59). Each source names a key by its extension (keyFile; a
// glob only in its last name, `*.pem`), lies under /root or /etc and outside a personal
// secret folder (.ssh, .gnupg, .aws); the destination is the last operand, a folder below
// /etc, or a file there named as a key, that is not itself secret or an account or privilege
// file. A copy renamed to another kind of file (`k.txt`, which would no longer read as a
// key), any option but cp's -p, -v, -f, -n or install's -m MODE, -v, -p, -D, a climb or a
// variable, a home, /tmp or a web root as the destination: nil. Under sudo or doas the
// command's own indices count.
func KeyDeploy(argv []string) []int {
	if len(argv) < 3 {
		return nil
	}
	name := base(argv[0])
	if name == "sudo" || name == "doas" {
		rest := dropAssignments(sudoOptions(argv[1:]))
		off := len(argv) - len(rest)
		var out []int
		for _, i := range KeyDeploy(rest) {
			out = append(out, i+off)
		}
		return out
	}
	if name != "cp" && name != "install" {
		return nil
	}
	var ops []int
	for i := 1; i < len(argv); i++ {
		switch x := argv[i]; {
		case x == "-p" || x == "-v" || x == "-f" || x == "-n" || x == "--preserve":
		case name == "install" && x == "-D":
		case name == "install" && x == "-m" && i+1 < len(argv) && reMode.MatchString(argv[i+1]):
			i++
		case strings.HasPrefix(x, "-"):
			return nil
		default:
			ops = append(ops, i)
		}
	}
	if len(ops) < 2 {
		return nil
	}
	dst := argv[ops[len(ops)-1]]
	if !reConfigDir.MatchString(dst) || secretSystem.MatchString(dst) || privFile.MatchString(dst) {
		return nil
	}
	if last := path.Base(dst); !strings.HasSuffix(dst, "/") && strings.Contains(last, ".") && !keyFile.MatchString(last) {
		return nil // a key renamed to another kind of file (`k.txt`) would no longer read as one
	}
	for _, i := range ops[:len(ops)-1] {
		src := argv[i]
		dir, file := path.Dir(src), path.Base(src)
		if strings.ContainsAny(dir, "*?[{$`") || strings.ContainsAny(file, "{$`") || strings.Contains(src, "..") ||
			strings.Contains(dir, "/.") || strings.HasSuffix(file, ".pub") || !keyFile.MatchString(file) ||
			!strings.HasPrefix(dir+"/", "/root/") && !strings.HasPrefix(dir+"/", "/etc/") {
			return nil
		}
	}
	out := ops[:len(ops)-1]
	if keyFile.MatchString(path.Base(dst)) {
		out = append(out, ops[len(ops)-1]) // the copy, named as a key: written, not read
	}
	return out
}

// reMode is install's -m MODE without a setuid or setgid bit: octal, three or four digits,
// the first of four 0 or 1 (sticky).
var reMode = lazyre.New(`^[01]?[0-7]{3}$`)

// fingerprintFile returns the index of the key file `ssh-keygen -l -f FILE` (or -B) reads to
// print its fingerprint, or -1 when argv does anything else.
func fingerprintFile(argv []string) int {
	list, file := false, -1
	for i := 1; i < len(argv); i++ {
		switch x := argv[i]; x {
		case "-l", "-B", "-lv", "-vl":
			list = true
		case "-v":
		case "-E", "-f":
			if i+1 >= len(argv) {
				return -1
			}
			i++
			if x == "-f" {
				file = i
			}
		default:
			return -1
		}
	}
	if !list {
		return -1
	}
	return file
}
