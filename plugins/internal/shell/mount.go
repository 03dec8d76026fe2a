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
