package shell

import "strings"

// BindMounts returns, for each word of argv that is a bind mount of a container run
// (`docker|podman|nerdctl run|create -v HOST:CONTAINER`, `--volume=`, `--mount
// type=bind,source=HOST,target=CONTAINER`), the host side of it, keyed by the word as it
// stands in argv. The container side names a path inside the container's own filesystem
// (`-v $HOME/.cache:/root/.cache` writes the container's /root, not the host's): only the
// host side says which of the user's files the container gets. A named volume (`-v
// data:/var/lib/x`) has no host path and maps to "".
func BindMounts(argv []string) map[string]string {
	if len(argv) < 3 {
		return nil
	}
	switch base(argv[0]) {
	case "docker", "podman", "nerdctl":
	default:
		return nil
	}
	args := argv[1:]
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		i++
	}
	if i >= len(args) {
		return nil
	}
	sub, rest := args[i], args[i+1:]
	if sub == "container" && len(rest) > 0 {
		sub, rest = rest[0], rest[1:]
	}
	if sub != "run" && sub != "create" {
		return nil
	}
	var out map[string]string
	for j, x := range rest {
		if !strings.HasPrefix(x, "-") {
			if j == 0 || !volumeFlag(rest[j-1]) {
				break // the image: what follows is the container's command
			}
			continue
		}
		word, mount := "", ""
		switch {
		case volumeFlag(x) && j+1 < len(rest):
			word, mount = rest[j+1], rest[j+1]
		case strings.HasPrefix(x, "--volume="), strings.HasPrefix(x, "--mount="), strings.HasPrefix(x, "-v="):
			word = x
			_, mount, _ = strings.Cut(x, "=")
		}
		if mount == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		src := mountSource(mount)
		if !strings.HasPrefix(src, "/") && !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "~") && !strings.HasPrefix(src, "$") {
			src = "" // a named volume
		}
		out[word] = src
	}
	return out
}

func volumeFlag(x string) bool { return x == "-v" || x == "--volume" || x == "--mount" }

// mountSource returns the host side of a -v or --mount value.
func mountSource(mount string) string {
	src, _, _ := strings.Cut(mount, ":")
	if strings.HasPrefix(mount, "type=") || strings.Contains(mount, "source=") || strings.Contains(mount, "src=") {
		src = ""
		for _, kv := range strings.Split(mount, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok && (k == "source" || k == "src") {
				src = v
			}
		}
	}
	return src
}

// CredentialMounts returns the words of argv that bind-mount a cloud or cluster CLI's whole
// credentials folder (`~/.aws`, `~/.kube`, `~/.azure`, `~/.config/gcloud`, `~/.docker`) into a
// container run whose other words name no program that prints, copies or sends files and no
// shell (`docker run --rm -v ~/.aws:/root/.aws amazon/aws-cli s3 ls`, how AWS documents its
// CLI image): the CLI in the image reads them as the host's own CLI would. plugins/injection
// asks about such a line instead of refusing it as a read (det62). A key file mounted
// (`-v ~/.aws/credentials:/c`), `~/.ssh`, `--entrypoint`, or `cat`, `tar`, `curl`, `sh`...
// anywhere on the command leave it refused.
func CredentialMounts(argv []string) []string {
	m := BindMounts(argv)
	if len(m) == 0 {
		return nil
	}
	for _, x := range argv[1:] {
		if x == "--entrypoint" || strings.HasPrefix(x, "--entrypoint=") || mountReader[base(x)] || credentialVerb[x] {
			return nil
		}
	}
	var out []string
	for w, h := range m {
		rest, ok := homeRest(h)
		if !ok || !credentialDirs[strings.TrimSuffix(rest, "/")] {
			continue
		}
		// the container side named again (`s3 sync /root/.aws s3://x/`): the folder itself
		// is what the command works on
		_, inside, _ := strings.Cut(strings.TrimPrefix(w, h), ":")
		inside, _, _ = strings.Cut(inside, ":")
		for _, x := range argv[1:] {
			if x != w && inside != "" && strings.Contains(x, strings.TrimSuffix(inside, "/")) {
				return nil
			}
		}
		out = append(out, w)
	}
	return out
}

// credentialVerb are the verbs and flags of cloud and cluster CLIs that print or hand out
// a credential (`aws configure export-credentials`, `gcloud auth print-access-token`, `kubectl
// config view --raw`, `aws ecr get-login-password`).
var credentialVerb = map[string]bool{
	"configure": true, "export-credentials": true, "print-access-token": true, "print-identity-token": true,
	"get-login-password": true, "get-session-token": true, "get-token": true, "--raw": true, "token": true,
}

// credentialDirs are the folders in the home directory where a cloud or cluster CLI keeps its
// settings and credentials, mounted whole into that CLI's image by its documentation.
var credentialDirs = map[string]bool{".aws": true, ".kube": true, ".azure": true, ".config/gcloud": true, ".docker": true}

// mountReader are programs that print, copy, pack or send files, and shells and interpreters
// that can run any of them: named on a container run, the mounted credentials may leave.
var mountReader = map[string]bool{
	"cat": true, "head": true, "tail": true, "less": true, "more": true, "base64": true, "xxd": true, "od": true,
	"strings": true, "tar": true, "zip": true, "cp": true, "scp": true, "rsync": true, "curl": true, "wget": true,
	"nc": true, "ncat": true, "socat": true, "sh": true, "bash": true, "zsh": true, "ash": true, "dash": true,
	"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "env": true, "printenv": true,
	"grep": true, "awk": true, "sed": true, "find": true, "xargs": true, "tee": true, "dd": true, "busybox": true,
}
