package shell

import (
	"path"
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// Elevated commands a reviewer lets a developer run (issue 26, third round: data/heldout/wide
// calib). Each is judged with the arguments that keep it what it says; anything the line
// cannot resolve (`$VAR`), a file from outside the project, or an option that runs another
// program makes it an ordinary elevated command again, which asks. What the command itself
// does is still judged after the elevation (Analyze recurses into it).

// projectAsRoot reports whether argv runs the project's own build or tests as root: `make`
// with targets, variable assignments and the options that only steer the build, `go test` of
// the project's packages, or a script inside the project that the line did not write or
// download (`sudo make install`, `sudo -E PATH=$PATH make integration`, `sudo go test
// ./integration/...`, `sudo ./hack/test.sh`, as containerd's and runc's documented root
// tests run). The project's files are what the unelevated `make` runs too: an order hidden
// in them already reaches everything the user owns, and a file written or downloaded on the
// line is judged where it is run (runScript). A makefile or directory outside the project
// (`-f /tmp/x.mk`, `-C /`), `SHELL=` (the program that runs each recipe), `go test -exec`
// (runs the test binary through another program) or an argument the line cannot resolve
// still ask.
func (a *analyzer) projectAsRoot(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	name, args := argv[0], argv[1:]
	isMake := name == "make" || name == "gmake"
	for _, x := range args {
		if strings.ContainsAny(x, "$`") && !(isMake && envWord.MatchString(x)) {
			return false
		}
	}
	switch {
	case isMake:
		for i := 0; i < len(args); i++ {
			x := args[i]
			switch {
			case x == "-f" || x == "--file" || x == "--makefile" || x == "-C" || x == "--directory" || x == "-I" || x == "--include-dir":
				if i+1 >= len(args) || !a.inProject(args[i+1]) {
					return false
				}
				i++
			case strings.HasPrefix(x, "-f") || strings.HasPrefix(x, "-C") || strings.HasPrefix(x, "-I"):
				if !a.inProject(x[2:]) {
					return false
				}
			case strings.HasPrefix(x, "--file=") || strings.HasPrefix(x, "--makefile=") || strings.HasPrefix(x, "--directory=") || strings.HasPrefix(x, "--include-dir="):
				_, v, _ := strings.Cut(x, "=")
				if !a.inProject(v) {
					return false
				}
			case strings.HasPrefix(x, "--eval"), x == "-E":
				return false // make text of its own: a recipe the line writes
			case strings.Contains(x, "=") && !strings.HasPrefix(x, "-"):
				k, _, _ := strings.Cut(x, "=")
				k = strings.TrimRight(strings.TrimSpace(k), ":+?!")
				if k == "SHELL" || k == ".SHELLFLAGS" || k == "MAKESHELL" || k == "MAKEFILES" {
					return false
				}
			}
		}
		return a.inProject(".")
	case name == "go" && len(args) > 0 && args[0] == "test":
		for _, x := range args[1:] {
			if x == "-exec" || strings.HasPrefix(x, "-exec=") || x == "-toolexec" || strings.HasPrefix(x, "-toolexec=") || x == "-overlay" || strings.HasPrefix(x, "-overlay=") {
				return false
			}
			// a package pattern outside the project (`go test /tmp/x/...`)
			if (strings.HasPrefix(x, ".") || strings.HasPrefix(x, "/") || strings.HasPrefix(x, "~")) && !a.inProject(strings.TrimSuffix(x, "/...")) {
				return false
			}
		}
		return a.inProject(".")
	case strings.Contains(name, "/"):
		// a script of the project, run by its path
		k := a.fileKey(name)
		return a.inProject(name) && !a.fetched[k] && a.written[k] == ""
	}
	return false
}

// envWord matches a word that is one variable the line does not set (`${extraflags}`,
// `$MAKEFLAGS_EXTRA`): its value comes from the session's environment, which the line does
// not write. make is the one program projectAsRoot takes it for: what such a word could
// carry (`-f`, `SHELL=`, `--eval`) the project's own Makefile, which the elevated make runs
// anyway, can already hold, and `sudo -E make` hands make the whole environment (MAKEFLAGS
// included) whatever its words say. A variable set earlier on the line is expanded before
// this is asked (`x='-f /tmp/x.mk'; sudo make $x` is judged as `-f /tmp/x.mk`), and a
// command substitution (`$(curl ...)`) or a word with more around the variable is not this.
var envWord = lazyre.New(`^\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$`)

// inProject reports whether p, after the working directory cd set, stays inside the project:
// relative, no climb out, nothing the line cannot resolve.
func (a *analyzer) inProject(p string) bool {
	if p == "" || a.cwd == "?" {
		return false
	}
	r := a.resolve(p)
	if strings.HasPrefix(r, "/") || strings.HasPrefix(r, "~") || strings.ContainsAny(r, "$`") {
		return false
	}
	c := path.Clean(r)
	return c != ".." && !strings.HasPrefix(c, "../")
}

// unmountAsRoot reports whether argv detaches one mounted file system, which deletes nothing
// (umount(8); fusermount(1)): `umount /mnt/disk`, `umount -l "$tmp/mount"`, `fusermount -uz
// "$dir"` (a FUSE mount only, whatever the name). umount of the root, a top folder (/usr,
// /home, /mnt), the kernel's or boot's trees (/sys/fs/cgroup), of a variable alone (`"$dir"`
// may be /), -a, -R, -O and -t (every file system of a kind) ask, and so does mounting.
func unmountAsRoot(argv []string) bool {
	if len(argv) < 2 {
		return false
	}
	name, args := base(argv[0]), argv[1:]
	for _, x := range args {
		if strings.ContainsAny(x, "`") || strings.Contains(x, "$(") {
			return false
		}
	}
	ops := operands(args)
	if len(ops) != 1 {
		return false
	}
	switch name {
	case "fusermount", "fusermount3":
		un := false
		for _, x := range args {
			if strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") {
				for _, c := range x[1:] {
					switch c {
					case 'u':
						un = true
					case 'z', 'q':
					default:
						return false
					}
				}
			} else if strings.HasPrefix(x, "-") {
				return false
			}
		}
		return un
	case "umount":
		for _, x := range args {
			switch x {
			case "-l", "--lazy", "-f", "--force", "-v", "--verbose", "-q", "--quiet", "-d", "--detach-loop", "-n", "--no-mtab", "-i", "--internal-only", "-c", "--no-canonicalize":
			default:
				if strings.HasPrefix(x, "-") {
					return false
				}
			}
		}
		t := ops[0]
		if i := strings.LastIndex(t, "/"); strings.Contains(t, "$") && (i < 0 || strings.ContainsAny(t[i+1:], "$*?[") || t[i+1:] == "") {
			return false // the last folder must be written out: a variable alone may be /
		}
		if strings.ContainsAny(t, "*?[") || strings.Contains(t, "..") {
			return false
		}
		if strings.HasPrefix(t, "/") {
			c := path.Clean(t)
			if strings.Count(c, "/") <= 1 || reKernelTree.MatchString(c) {
				return false // the root, a top folder, or the kernel's and boot's trees
			}
		}
		return true
	}
	return false
}

// reKernelTree is the kernel's views, the devices and the boot files: unmounting there
// (/sys/fs/cgroup, /proc/sys/fs/binfmt_misc, /dev/pts) takes the system's own mounts away.
var reKernelTree = lazyre.New(`^/(proc|sys|dev|boot)(/|$)`)

// groupAsRoot reports whether argv creates one group and nothing else (`groupadd --system
// lxd`, groupadd(8)): a group without members grants nothing. A group id (-g, -o: an alias of
// root's group), a password (-p), -K or a name the line cannot resolve ask.
func groupAsRoot(argv []string) bool {
	if len(argv) < 2 || base(argv[0]) != "groupadd" {
		return false
	}
	n := 0
	for _, x := range argv[1:] {
		switch {
		case x == "-f" || x == "--force" || x == "-r" || x == "--system" || x == "-fr" || x == "-rf":
		case strings.HasPrefix(x, "-"):
			return false
		case strings.ContainsAny(x, "$`/") || x == "":
			return false
		default:
			n++
		}
	}
	return n == 1
}

// housekeepingAsRoot reports whether argv is system housekeeping that changes no security
// boundary and destroys nothing (`sysctl --system`, `swapoff -a`, `apt-mark hold` since
// issue 26's fourth round): refreshing the dynamic linker's cache (`ldconfig`, its
// cache only: ldconfig(8)), systemd reading its unit files again and starting or
// restarting an installed unit (`systemctl daemon-reload`, `systemctl restart docker`,
// `service docker restart`: systemctl(1); stop, disable, mask and enable ask), loading a kernel module by name from
// the installed kernel's tree (`modprobe fuse`; a file path, `-r`, a config file or
// `--force` ask: modprobe(8)), creating directories (`mkdir -p /etc/x.d`, no `-m` mode),
// mounting what /etc/fstab already lists (`mount -a`: mount(8)), and waiting for or
// replaying device events (`udevadm settle`, `udevadm trigger`, `udevadm control --reload`,
// `--children-max`: udevadm(8)).
func housekeepingAsRoot(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	name, args := base(argv[0]), argv[1:]
	for _, x := range args {
		if strings.ContainsAny(x, "$`") {
			return false
		}
	}
	switch name {
	case "ldconfig":
		for _, x := range args {
			if x != "-v" && x != "--verbose" && x != "-p" && x != "--print-cache" {
				return false
			}
		}
		return true
	case "systemctl":
		// daemon-reload; starting or restarting a unit that is installed (stop, disable,
		// mask, enable and the rest ask: they take a service away or make one persist; a
		// unit file the line writes asks where it is written, with sudo tee)
		if len(args) == 1 && args[0] == "daemon-reload" {
			return true
		}
		if len(args) >= 2 {
			switch args[0] {
			case "start", "restart", "reload", "try-restart", "reload-or-restart":
				for _, u := range args[1:] {
					if strings.HasPrefix(u, "-") || strings.Contains(u, "/") {
						return false
					}
				}
				return true
			}
		}
		return false
	case "service":
		// SysV's service NAME start|restart|reload|status
		if len(args) == 2 && !strings.ContainsAny(args[0], "/-") {
			switch args[1] {
			case "start", "restart", "reload", "status":
				return true
			}
		}
		return false
	case "modprobe":
		ops := operands(args)
		if len(ops) == 0 {
			return false
		}
		for _, x := range args {
			if strings.HasPrefix(x, "-") && x != "-v" && x != "--verbose" && x != "-q" && x != "--quiet" && x != "-b" && x != "--use-blacklist" && x != "-a" && x != "--all" {
				return false
			}
		}
		for _, x := range ops {
			if strings.ContainsAny(x, "/.") && !strings.Contains(x, "=") {
				return false // a module file, not a name in the kernel's tree
			}
		}
		return true
	case "mkdir":
		for _, x := range args {
			if strings.HasPrefix(x, "-") && x != "-p" && x != "--parents" && x != "-v" && x != "--verbose" && x != "-pv" && x != "-vp" {
				return false
			}
		}
		return len(operands(args)) > 0
	case "mount":
		for _, x := range args {
			if x != "-a" && x != "-av" && x != "-va" && x != "-v" && x != "--all" && x != "--verbose" {
				return false
			}
		}
		return hasFlag(args, "-a", "--all")
	case "sysctl":
		// reading the settings files again (`sysctl --system`: sysctl(8)); dropping the
		// clean caches (`sysctl -w vm.drop_caches=3`, below); writing another value
		// (`-w kernel.yama.ptrace_scope=0`) or a file of the line's asks
		return len(args) == 1 && args[0] == "--system" ||
			len(args) == 2 && args[0] == "-w" && reDropCaches.MatchString(args[1]) || len(args) == 1 && reDropCaches.MatchString(args[0])
	case "tee":
		// `echo 3 | sudo tee /proc/sys/vm/drop_caches`: the file takes 1, 2 or 3 and nothing else
		return len(args) == 1 && args[0] == dropCachesFile || len(args) == 2 && args[0] == "-a" && args[1] == dropCachesFile
	case "sh", "bash":
		// `sudo sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches'`: a redirect needs the shell
		return len(args) == 2 && args[0] == "-c" && reDropCachesScript.MatchString(args[1])
	case "apt-get", "apt", "dnf", "yum":
		// emptying the package manager's download cache (`apt-get clean`, `apt-get
		// autoclean`: apt-get(8); `dnf clean all`: dnf(8)): the next install downloads again
		switch {
		case len(args) == 1 && (args[0] == "clean" || args[0] == "autoclean" && name != "dnf" && name != "yum"):
			return true
		case len(args) == 2 && args[0] == "clean" && (name == "dnf" || name == "yum"):
			return args[1] == "all" || args[1] == "packages" || args[1] == "metadata" || args[1] == "expire-cache" || args[1] == "dbcache"
		}
		return false
	case "locale-gen":
		// compiling the named locales (`locale-gen en_US.UTF-8`: locale-gen(8)), as container
		// images and CI set-ups do; an option asks
		for _, x := range args {
			if !reLocale.MatchString(x) {
				return false
			}
		}
		return true
	case "swapoff", "swapon":
		// every swap area /etc/fstab lists (`swapoff -a`, kubeadm's prerequisite): swapon(8)
		return len(args) == 1 && (args[0] == "-a" || args[0] == "--all")
	case "apt-mark":
		// holding a package at its version or marking it manual (apt-mark(8)); nothing
		// is installed or removed
		if len(args) < 1 {
			return false
		}
		switch args[0] {
		case "hold", "unhold", "showhold", "manual", "showmanual", "auto", "showauto":
			return true
		}
		return false
	case "udevadm":
		if len(args) == 0 {
			return false
		}
		switch args[0] {
		case "settle", "info":
			return true
		case "trigger":
			for _, x := range args[1:] {
				if strings.Contains(x, "remove") {
					return false // replays removal: drivers let go of devices
				}
			}
			return true
		case "control":
			for _, x := range args[1:] {
				if x != "--reload" && x != "-R" && x != "--reload-rules" && !strings.HasPrefix(x, "--children-max=") && !strings.HasPrefix(x, "-m") {
					return false
				}
			}
			return len(args) > 1
		}
	}
	return false
}

// reLocale is a locale's name as locale-gen takes it (en_US.UTF-8, de_DE@euro, C.UTF-8).
var reLocale = lazyre.New(`^[A-Za-z]{1,3}(?:_[A-Z]{2})?(?:\.[A-Za-z0-9-]+)?(?:@[a-z]+)?$`)

// dropCachesFile frees the kernel's clean page cache, dentries and inodes: "a non-destructive
// operation [that] will not free any dirty objects", for benchmarks that start cold
// (Documentation/admin-guide/sysctl/vm.rst, drop_caches; issue 26, det50). It accepts 1, 2, 3
// (and 4, which only silences its log line); nothing written there changes what a user may do.
const dropCachesFile = "/proc/sys/vm/drop_caches"

var (
	// reDropCaches is sysctl's name for it with a value the file takes
	reDropCaches = lazyre.New(`^vm\.drop_caches=[1-4]$`)
	// reDropCachesScript is the script of `sh -c` that writes it: sync first or not, one
	// echo of a value the file takes, redirected to it, nothing else
	reDropCachesScript = lazyre.New(`^\s*(?:sync\s*(?:;|&&)\s*)?echo\s+[1-4]\s*>\s*/proc/sys/vm/drop_caches\s*;?\s*$`)
)

// reclaimAsRoot reports whether argv gives files back to the invoking user: `chown [-R]
// $USER[:$USER] path` (also `$(id -u)`, `$(whoami)`) of paths inside the project or under
// /tmp, as a build that ran as root leaves them (`sudo chown -R $USER build`), and, without
// -R, files in the user's own home directory that a command run as root left root's
// (`sudo chown $(id -u):$(id -g) $HOME/.kube/config` after kubeadm's `sudo cp`): the user's
// own files given to the user, whatever they hold. Giving a system file to the user
// (`/etc/fuse.conf`), root as the owner, the home directory itself, a recursive chown in the
// home directory (priv/perms_system) or any other path asks.
func (a *analyzer) reclaimAsRoot(argv []string) bool {
	argv = joinSubst(argv)
	if len(argv) < 3 || argv[0] != "chown" {
		return false
	}
	ops := operands(argv[1:])
	for _, x := range argv[1:] {
		if strings.HasPrefix(x, "-") && x != "-R" && x != "--recursive" && x != "-v" && x != "--verbose" && x != "-h" && x != "--no-dereference" && x != "-Rv" && x != "-vR" {
			return false
		}
	}
	if len(ops) < 2 {
		return false
	}
	owner, group, _ := strings.Cut(ops[0], ":")
	if !invokingUser(owner) || group != "" && !invokingUser(group) {
		return false
	}
	recursive := hasFlag(argv[1:], "-R", "--recursive", "-Rv", "-vR")
	for _, p := range ops[1:] {
		c := path.Clean(a.resolve(p))
		if strings.Contains(c, "..") || strings.ContainsAny(c, "*?[`") {
			return false
		}
		if home(c) && !recursive && strings.Contains(c, "/") && !strings.ContainsAny(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(c, "${HOME}"), "$HOME"), "~"), "$") {
			continue // a file in the user's own home
		}
		tmp := strings.HasPrefix(c, "/tmp/") || strings.HasPrefix(c, "/var/tmp/")
		if !(tmp || a.inProject(p)) || PathRisk(c) == RiskSecret {
			return false
		}
	}
	return true
}

// homeReclaim reports whether a recursive chown gives folders in the home directory that
// each belong to one program (homeProgramDir: `~/.npm`, `~/.config/k9s`; homeCache:
// `~/.cache/pip`) to the invoking user, as npm's EACCES message tells the user to (`sudo
// chown -R $(whoami) ~/.npm`). Only -R and -v: -L and -H follow links out of the folder.
func (a *analyzer) homeReclaim(name string, args []string) bool {
	if name != "chown" {
		return false
	}
	args = joinSubst(args)
	for _, x := range args {
		if strings.HasPrefix(x, "-") && x != "-R" && x != "--recursive" && x != "-v" && x != "--verbose" && x != "-Rv" && x != "-vR" {
			return false
		}
	}
	ops := operands(args)
	if len(ops) < 2 {
		return false
	}
	owner, group, _ := strings.Cut(ops[0], ":")
	if !invokingUser(owner) || group != "" && !invokingUser(group) {
		return false
	}
	for _, p := range ops[1:] {
		if r := a.resolve(p); !homeProgramDir(r) && !homeCache(r) {
			return false
		}
	}
	return true
}

// invokingUser reports whether s names the user who ran sudo as the shell expands it.
func invokingUser(s string) bool {
	switch s {
	case "$USER", "${USER}", "$(id -u)", "$(id -un)", "$(whoami)", "$SUDO_USER", "${SUDO_USER}", "$(id -g)", "$(id -gn)":
		return true
	}
	return false
}

// containerdCLI reports whether argv uses containerd's `ctr` for images only: listing,
// pulling, importing, tagging or checking them (`sudo ctr -n=k8s.io images import
// pause.tar`), or to look: listing snapshots, content, containers, tasks, namespaces and
// plugins, or fetching content into the store as a pull does (`sudo ctr snapshot ls`, `sudo
// ctr content fetch docker.io/library/redis:alpine`; issue 26, fourth round). Like the docker CLI, ctr talks to a daemon that runs as root, so sudo adds
// nothing to what these verbs do; running a container (`ctr run --privileged`, host mounts),
// mounting an image and any other ctr verb still ask.
func containerdCLI(argv []string) bool {
	if len(argv) < 3 || argv[0] != "ctr" {
		return false
	}
	rest := argv[1:]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		switch {
		case strings.HasPrefix(rest[0], "-n=") || strings.HasPrefix(rest[0], "--namespace="):
			rest = rest[1:]
		case rest[0] == "-n" || rest[0] == "--namespace":
			if len(rest) < 2 {
				return false
			}
			rest = rest[2:]
		default:
			return false // --address (another daemon's socket) and the rest
		}
	}
	if len(rest) < 2 {
		return false
	}
	switch rest[0] {
	case "images", "image", "i":
		switch rest[1] {
		case "ls", "list", "check", "import", "pull", "tag":
			return true
		}
	case "snapshots", "snapshot", "snapshotter":
		switch rest[1] {
		case "ls", "list", "info", "usage", "tree":
			return true
		}
	case "content":
		switch rest[1] {
		case "ls", "list", "fetch", "fetch-object":
			return true
		}
	case "containers", "container", "c", "tasks", "task", "t", "namespaces", "namespace", "ns", "plugins", "plugin":
		switch rest[1] {
		case "ls", "list", "info", "ps":
			return true
		}
	}
	return false
}

// bindServiceOnly reports whether setcap's arguments grant cap_net_bind_service and no other
// capability (`setcap cap_net_bind_service=+ep /usr/bin/caddy`; `-r` removes capabilities).
func bindServiceOnly(args []string) bool {
	ops := operands(args)
	if len(ops) < 2 || hasFlag(args, "-n") || strings.ContainsAny(ops[0], " \t,") {
		return false
	}
	i := strings.IndexAny(ops[0], "=+-")
	if i < 0 || strings.Count(ops[0], "=") > 1 {
		return false
	}
	return strings.ToLower(ops[0][:i]) == "cap_net_bind_service"
}

// dockerdOptions are the Docker daemon's options that tune storage, logging, networking
// inside the daemon's own bridge, limits and debugging (dockerd(8),
// https://docs.docker.com/reference/cli/dockerd/), with whether each takes a value. Left
// out, so that they ask: listening on TCP (`-H tcp://...` without TLS is root for anyone on
// the network), another configuration file, data or exec root, pid file, socket group,
// runtimes and helper binaries (`--add-runtime`, `--userland-proxy-path`, `--init-path`),
// authorization plugins, insecure registries, metrics listeners and an unconfined seccomp
// profile.
var dockerdOptions = map[string]bool{
	"-D": false, "--debug": false, "-l": true, "--log-level": true, "-s": true, "--storage-driver": true,
	"--storage-opt": true, "--log-driver": true, "--log-opt": true, "--log-format": true, "--raw-logs": false,
	"--default-ulimit": true, "--dns": true, "--dns-opt": true, "--dns-search": true, "--mtu": true,
	"--max-concurrent-downloads": true, "--max-concurrent-uploads": true, "--max-download-attempts": true,
	"--live-restore": false, "--shutdown-timeout": true, "--default-shm-size": true, "--registry-mirror": true,
	"--label": true, "--bip": true, "--default-address-pool": true, "--fixed-cidr": true, "--fixed-cidr-v6": true,
	"--ipv6": false, "--cgroup-parent": true, "--exec-opt": true, "--oom-score-adjust": true, "--validate": false,
	"-v": false, "--version": false, "-h": false, "--help": false, "--experimental": false, "--icc": false,
	"--ip-forward": false, "--ip-masq": false, "--userns-remap": true, "--default-cgroupns-mode": true,
	"--default-ipc-mode": true, "--no-new-privileges": false, "--selinux-enabled": false, "--init": false,
	"--tlsverify": false, "--tls": false, "--tlscacert": true, "--tlscert": true, "--tlskey": true,
	"--default-runtime": true, "--containerd-namespace": true, "--features": true,
}

// dockerdAsRoot reports whether argv starts the Docker daemon with options from
// dockerdOptions only, on its default local socket or another unix socket (`sudo dockerd
// --storage-opt dm.basesize=50G`, `sudo dockerd --debug`): the daemon that `sudo docker`
// talks to anyway, tuned. What reaches it from the network or runs other programs as root
// asks.
func dockerdAsRoot(argv []string) bool {
	if len(argv) == 0 || argv[0] != "dockerd" {
		return false
	}
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		x := args[i]
		if strings.ContainsAny(x, "$`") {
			return false
		}
		k, v, hasValue := strings.Cut(x, "=")
		if k == "-H" || k == "--host" {
			if !hasValue {
				if i+1 >= len(args) {
					return false
				}
				i++
				v = args[i]
			}
			if !strings.HasPrefix(v, "unix://") && !strings.HasPrefix(v, "fd://") {
				return false
			}
			continue
		}
		takes, ok := dockerdOptions[k]
		if !ok {
			return false
		}
		if takes && !hasValue {
			if i+1 >= len(args) {
				return false
			}
			i++
			v = args[i]
		}
		if strings.Contains(v, "$") || strings.Contains(strings.ToLower(v), "unconfined") {
			return false
		}
	}
	return true
}

// joinsGroup reports whether usermod or gpasswd only adds the invoking user to groups:
// `usermod -aG docker $USER`, `gpasswd -a $USER docker`. Groups named sudo, wheel, admin or
// root (the sudoers' own) are not this.
func joinsGroup(name string, args []string) bool {
	var groups, user string
	switch name {
	case "usermod":
		// -a with -G, short or long (`usermod --append --groups lxd "$(id -un)"`, snapcraft's
		// documented step), in any order, and one operand; -G alone replaces the groups, and
		// -s, -l, -u... change the account
		appends := false
		var ops []string
		for i := 0; i < len(args); i++ {
			switch x := args[i]; {
			case x == "-a" || x == "--append":
				appends = true
			case (x == "-aG" || x == "-Ga") && i+1 < len(args):
				appends, groups = true, args[i+1]
				i++
			case (x == "-G" || x == "--groups") && i+1 < len(args):
				groups = args[i+1]
				i++
			case strings.HasPrefix(x, "--groups="):
				groups = strings.TrimPrefix(x, "--groups=")
			case strings.HasPrefix(x, "-"):
				return false
			default:
				ops = append(ops, x)
			}
		}
		if !appends || groups == "" || len(ops) != 1 {
			return false
		}
		user = ops[0]
	case "gpasswd":
		if len(args) != 3 || args[0] != "-a" {
			return false
		}
		user, groups = args[1], args[2]
	}
	if !invokingUser(user) {
		return false
	}
	for _, g := range strings.Split(groups, ",") {
		switch g {
		case "", "sudo", "wheel", "admin", "root", "shadow", "disk":
			return false
		}
	}
	return true
}

// systemAccount reports whether useradd's args create one locked system account for a
// service (`useradd -r -g vitess vitess`, a package's preinstall script; useradd(8): -r makes
// a system account, which gets no password unless -p gives one): -r, a primary group that is
// not an administrators' one, no home (-M) or a home folder, a comment, and a shell that
// refuses logins. A password, a uid (0 among them: -o -u 0), supplementary groups, a login
// shell or anything else is an account change and refused.
func systemAccount(args []string) bool {
	system := false
	var ops []string
	for i := 0; i < len(args); i++ {
		x := args[i]
		val := ""
		if (x == "-g" || x == "--gid" || x == "-s" || x == "--shell" || x == "-d" || x == "--home-dir" || x == "-c" || x == "--comment") && i+1 < len(args) {
			val = args[i+1]
			i++
		}
		switch x {
		case "-r", "--system":
			system = true
		case "-M", "--no-create-home", "-N", "--no-user-group", "-U", "--user-group":
		case "-g", "--gid":
			switch val {
			case "", "0", "root", "sudo", "wheel", "admin", "shadow", "disk", "docker", "lxd", "adm":
				return false
			}
		case "-s", "--shell":
			switch val {
			case "/usr/sbin/nologin", "/sbin/nologin", "/bin/false", "/usr/bin/false":
			default:
				return false
			}
		case "-d", "--home-dir", "-c", "--comment":
		default:
			if strings.HasPrefix(x, "-") {
				return false
			}
			ops = append(ops, x)
		}
	}
	return system && len(ops) == 1 && ops[0] != "root" && !strings.ContainsAny(ops[0], "$`:/ ")
}

// installAsRoot reports whether argv installs programs the line names into the
// administrator's own folder for local software, /usr/local/bin or /usr/local/sbin (FHS 3.0
// §4.9: "for use by the system administrator when installing software locally"): `sudo mv
// ./kind /usr/local/bin/kind`, `sudo install -m 755 runc.amd64 /usr/local/sbin/runc`, the
// last step of kind's, containerd's and helm's documented installs (cp only with
// --remove-destination: below). Each source is a file in
// the project or /tmp; a target name is the source's own (runc.amd64 as runc, kind-linux-amd64
// as kind); no setuid or setgid mode; and nothing installed under the name of a shell or of
// a program that handles passwords or keys (sudo, su, ssh, gpg, git...), which a copy in
// /usr/local/bin, ahead of /usr/bin on PATH, would stand in for. /usr/bin and /usr/sbin
// (the distribution's), an archive unpacked into /usr/local, and anything else ask.
func (a *analyzer) installAsRoot(argv []string) bool {
	if len(argv) < 3 {
		return false
	}
	name, args := argv[0], argv[1:]
	var ops []string
	switch name {
	case "install":
		for i := 0; i < len(args); i++ {
			x := args[i]
			switch {
			case x == "-m" || x == "--mode" || x == "-o" || x == "--owner" || x == "-g" || x == "--group":
				if i+1 >= len(args) {
					return false
				}
				if (x == "-m" || x == "--mode") && !plainMode(args[i+1]) {
					return false
				}
				i++
			case strings.HasPrefix(x, "--mode="):
				if !plainMode(strings.TrimPrefix(x, "--mode=")) {
					return false
				}
			case x == "-v" || x == "--verbose" || x == "-c" || x == "-p" || x == "-s" || x == "--strip" || x == "-D":
			case strings.HasPrefix(x, "-"):
				return false
			default:
				ops = append(ops, x)
			}
		}
	case "mv", "cp":
		removes := name == "mv"
		for _, x := range args {
			switch {
			case x == "-f" || x == "-v" || x == "-fv" || x == "-vf" || x == "-p" || x == "-i" || x == "-n":
			case x == "--remove-destination" && name == "cp":
				removes = true
			case strings.HasPrefix(x, "-"):
				return false
			default:
				ops = append(ops, x)
			}
		}
		if !removes {
			// cp writes through a link already at the destination (cp(1): only
			// --remove-destination removes it first), and where /usr/local/bin is the
			// user's own (Homebrew on Intel macOS) the agent may have planted one pointing
			// at a system file, which root would then overwrite; mv and install replace the
			// link (issue 26)
			return false
		}
	default:
		return false
	}
	if len(ops) < 2 {
		return false
	}
	dst := path.Clean(ops[len(ops)-1])
	srcs := ops[:len(ops)-1]
	dir, target := dst, ""
	if dst != "/usr/local/bin" && dst != "/usr/local/sbin" {
		dir, target = path.Dir(dst), path.Base(dst)
		if len(srcs) != 1 {
			return false
		}
	}
	if dir != "/usr/local/bin" && dir != "/usr/local/sbin" {
		return false
	}
	for _, src := range srcs {
		if strings.ContainsAny(src, "`*?[") {
			return false
		}
		if i := strings.Index(src, "$"); i >= 0 {
			if !namedVariant(src, target) {
				return false
			}
			src = src[:i] + "v" // the folder and the name's start are what is checked below
		}
		c := path.Clean(a.resolve(src))
		if !(strings.HasPrefix(c, "/tmp/") || a.inProject(src)) {
			return false
		}
		b := path.Base(c)
		if target != "" {
			if b != target && !strings.HasPrefix(b, target+".") && !strings.HasPrefix(b, target+"-") && !strings.HasPrefix(b, target+"_") {
				return false
			}
			b = target
		}
		if standIn(b) {
			return false
		}
	}
	return true
}

// programAsRoot reports whether argv makes a program in the administrator's folder for local
// software runnable or reachable there, the step before or after installAsRoot in install
// documents: `sudo chmod +x /usr/local/bin/kind` (kind's quick start), `sudo ln -s
// /usr/local/go/bin/go /usr/local/bin/go`, `sudo ln -sf /opt/nvim-linux64/bin/nvim
// /usr/local/bin/nvim` (issue 26, det50). chmod only adds execute permission, on files named
// in /usr/local/bin or /usr/local/sbin; ln makes one link there under the name of the program
// it points to, which is installed in /usr/local or /opt. A link named for another
// program (`ln -s $(which bun) /usr/local/bin/node`), a stand-in for sudo, ssh or a shell,
// /usr/bin, a numeric mode, a glob, a variable or -R asks as before.
func programAsRoot(argv []string) bool {
	if len(argv) < 3 {
		return false
	}
	for _, x := range argv[1:] {
		if strings.ContainsAny(x, "$`*?[") {
			return false
		}
	}
	ops := operands(argv[1:])
	switch argv[0] {
	case "chmod":
		for _, x := range argv[1:] {
			if strings.HasPrefix(x, "-") && x != "-v" && x != "--verbose" {
				return false
			}
		}
		// execute only: chmod follows a link, and where /usr/local/bin is the user's own
		// (Homebrew on Intel macOS) a link there may point at a secret; execute without
		// read shows nothing of it, where 755 would let everyone read it
		if len(ops) < 2 || !reAddX.MatchString(ops[0]) {
			return false
		}
		for _, f := range ops[1:] {
			if !localBin(f) {
				return false
			}
		}
		return true
	case "ln":
		for _, x := range argv[1:] {
			switch x {
			case "-s", "-sf", "-fs", "-sv", "-vs", "-sfv", "-svf", "-fsv", "-f", "-v", "--symbolic", "--force", "--verbose":
			default:
				if strings.HasPrefix(x, "-") {
					return false
				}
			}
		}
		if len(ops) != 2 || !localBin(ops[1]) {
			return false
		}
		src := path.Clean(ops[0])
		if path.Base(src) != path.Base(ops[1]) {
			return false
		}
		// a program installed as root; a link to a file the user may still write (the
		// project, /tmp, the home) would let the user change what root runs by that name
		return strings.HasPrefix(src, "/usr/local/") || strings.HasPrefix(src, "/opt/")
	}
	return false
}

// reAddX is a symbolic mode that only adds execute permission (`+x`, `a+x`, `u+x,g+x`).
var reAddX = lazyre.New(`^[ugoa]*\+[xX]+(?:,[ugoa]*\+[xX]+)*$`)

// localBin reports whether f is a file named directly in /usr/local/bin or /usr/local/sbin,
// not under the name of a program that handles passwords or keys or a shell (standIn).
func localBin(f string) bool {
	c := path.Clean(f)
	dir := path.Dir(c)
	return (dir == "/usr/local/bin" || dir == "/usr/local/sbin") && !standIn(path.Base(c))
}

// reVariantRest is the rest of a file name from its first variable on: plain variables
// (`$PLATFORM`, `${VERSION}`) and name characters, no folder, command or glob.
var reVariantRest = lazyre.New(`^(?:[A-Za-z0-9._-]|\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\})+$`)

// namedVariant reports whether src is a build of the program target with a version or
// platform variable in its file name after the program's own (`yq_${PLATFORM}` installed as
// yq: `wget …/yq_${PLATFORM}.tar.gz -O - | tar xz && sudo mv yq_${PLATFORM}
// /usr/local/bin/yq`, mikefarah/yq's README; issue 26, det50): the folder and the program's
// name are written out, so what lands in /usr/local/bin is the build the line named. A
// variable in a folder, before the name, or an install into the folder (no target name) asks.
func namedVariant(src, target string) bool {
	i := strings.Index(src, "$")
	if target == "" || i < 0 {
		return false
	}
	name := src[strings.LastIndex(src[:i], "/")+1 : i]
	for _, sep := range []string{"_", "-", "."} {
		if strings.HasPrefix(name, target+sep) {
			return reVariantRest.MatchString(src[i:])
		}
	}
	return false
}

// plainMode reports whether an install mode sets no setuid, setgid or sticky bit.
func plainMode(m string) bool {
	if strings.Trim(m, "01234567") == "" {
		return len(m) == 3 || len(m) == 4 && m[0] == '0'
	}
	return !strings.ContainsAny(m, "st")
}

// standIn reports whether a program of this name in /usr/local/bin would stand in for a shell
// or for a program that reads passwords, keys or tokens.
func standIn(name string) bool {
	switch name {
	case "sudo", "su", "doas", "pkexec", "passwd", "chsh", "login", "ssh", "sshd", "scp", "sftp", "ssh-add",
		"ssh-agent", "ssh-keygen", "gpg", "gpg2", "gpg-agent", "pinentry", "bash", "sh", "zsh", "dash",
		"fish", "ksh", "env", "git", "gh", "aws", "gcloud", "az", "op", "pass", "security", "keyctl":
		return true
	}
	return strings.HasPrefix(name, "git-") || strings.HasPrefix(name, "pinentry")
}

// runProgramDir reports whether p (resolved) lies in one program's own run-time folder,
// `/run/<program>/...` or `/var/run/<program>/...`, not in the folders of /run that many
// programs or the user's session share (runShared: `/run/user/1000`, `/run/systemd`). FHS 3.0
// §3.15 gives each program a subdirectory of /run and has /run cleared at every boot. A
// command without sudo deletes there only what the user owns (a test suite's own folder,
// `rm -rf /run/containerd-test/*` in containerd's Makefile), so the line loses nothing a
// reboot would keep; the same delete as root asks (destroy/rm_system).
func runProgramDir(p string) bool {
	c := path.Clean(p)
	if strings.HasPrefix(c, "/var/run/") {
		c = strings.TrimPrefix(c, "/var")
	}
	if !strings.HasPrefix(c, "/run/") || !deepSystemPath(c) {
		return false
	}
	parts := strings.Split(strings.TrimPrefix(c, "/"), "/")
	return len(parts) >= 2 && !runShared[parts[1]] && !strings.ContainsAny(parts[1], "*?[{")
}

// systemState are the folders of /var/lib that hold the system's own records rather than one
// service's data: the package managers' databases (dpkg, apt, rpm, dnf, yum, pacman, snapd,
// flatpak), the init system's, sudo's, PolicyKit's and PAM's state, the account service's and
// SSSD's caches, ucf's record of configuration files. Losing one breaks the system, not one
// program. optShared are the folders of /opt that are a package manager's whole prefix
// (MacPorts' /opt/local, Homebrew's /opt/homebrew, Fink's /opt/sw): every program it installed.
var (
	systemState = map[string]bool{
		"dpkg": true, "apt": true, "aptitude": true, "rpm": true, "dnf": true, "yum": true,
		"pacman": true, "snapd": true, "flatpak": true, "systemd": true, "sudo": true,
		"polkit-1": true, "PackageKit": true, "AccountsService": true, "sss": true, "pam": true,
		"ucf": true, "dbus": true, "misc": true, "private": true,
	}
	optShared = map[string]bool{"local": true, "homebrew": true, "sw": true, "bin": true, "lib": true}
)

// programFolder reports whether p (resolved) is one program's whole folder directly under
// /var/lib (its state: FHS 3.0 §5.8, "each application must use a subdirectory") or /opt
// (one add-on package: FHS 3.0 §3.13, "a package to be installed in /opt must locate its
// static files in a separate /opt/<package> directory tree"): a plain name, no glob,
// variable or climb, not one of the system's own records (systemState) or a package manager's
// prefix (optShared). Deleting it loses that one program's data or install, which a reviewer
// can weigh (a Dockerfile's `rm -rf /var/lib/mysql/` before it installs a server of its own,
// CI's `sudo rm -rf /opt/ghc` to free disk space), so it asks (destroy/rm_system, issue 26,
// det59); /var/lib and /opt themselves or their contents by glob stay refused.
func programFolder(p string) bool {
	if strings.ContainsAny(p, "*?[{$`") || strings.Contains(p, "..") {
		return false
	}
	c := path.Clean(p)
	dir, name := path.Dir(c), path.Base(c)
	if name == "" || strings.HasPrefix(name, ".") {
		return false
	}
	switch dir {
	case "/var/lib":
		return !systemState[name]
	case "/opt":
		return !optShared[name]
	}
	return false
}

// localProgram reports whether p names one program directly in /usr/local/bin or
// /usr/local/sbin by its full name: no glob, no climb, not the folder itself, and not the
// name of a shell or of a program that handles passwords or keys (standIn), whose removal
// would hand the name to a copy elsewhere on PATH. Taking a program out of the
// administrator's folder for local software (FHS 3.0 §4.9) is the undoing of installAsRoot;
// the distribution's /usr/bin, /usr/local/lib and recursive deletes are not this.
func localProgram(p string) bool {
	if strings.ContainsAny(p, "*?[{$`") || strings.Contains(p, "..") {
		return false
	}
	c := path.Clean(p)
	dir, name := path.Dir(c), path.Base(c)
	return (dir == "/usr/local/bin" || dir == "/usr/local/sbin") && name != "" && !strings.HasPrefix(name, ".") && !standIn(name)
}

// uninstallAsRoot reports whether argv removes named programs from /usr/local/bin or
// /usr/local/sbin (`sudo rm -f /usr/local/bin/fusermount /usr/local/bin/fusermount3`, as
// rclone's CI does before it installs its own): rm with -f or -v only, each operand a
// localProgram. -r, a glob, the folder itself, /usr/bin and a stand-in name ask.
func uninstallAsRoot(argv []string) bool {
	if len(argv) < 2 || argv[0] != "rm" {
		return false
	}
	n := 0
	for _, x := range argv[1:] {
		switch {
		case x == "-f" || x == "-v" || x == "-fv" || x == "-vf" || x == "--force" || x == "--verbose":
		case strings.HasPrefix(x, "-"):
			return false
		case !localProgram(x):
			return false
		default:
			n++
		}
	}
	return n > 0
}

// storeInstall reports whether argv installs named packages from the snap or Flatpak store the
// system already trusts, with the store's signature check in place: `snap install snapcraft
// --classic` (the Snap Store signs every snap, and grants --classic only after a manual
// review: https://snapcraft.io/docs/install-modes, https://snapcraft.io/docs/classic-confinement)
// and `flatpak install -y flathub org.freedesktop.Platform//24.08` from a remote already
// configured, whose GPG key was given when it was added (flatpak-install(1)). A local file
// (`./x.snap`, `x.flatpak`), a URL or `.flatpakref`, `--dangerous` (an unsigned snap),
// `--devmode` (no confinement without review), `--from`, `--bundle`, `--no-gpg-verify` and
// anything the line cannot resolve ask; adding a remote (`flatpak remote-add`) is not this.
func storeInstall(argv []string) bool {
	if len(argv) < 2 {
		return false
	}
	name, args := base(argv[0]), argv[1:]
	if args[0] != "install" && !(name == "snap" && args[0] == "refresh") && !(name == "flatpak" && args[0] == "update") {
		return false
	}
	var ops []string
	for _, x := range args[1:] {
		if strings.ContainsAny(x, "$`") {
			return false
		}
		if strings.HasPrefix(x, "-") {
			k, _, _ := strings.Cut(x, "=")
			switch name {
			case "snap":
				switch k {
				case "--classic", "--channel", "--edge", "--beta", "--candidate", "--stable", "--revision", "--no-wait":
				default:
					return false // --dangerous, --devmode, --jailmode, --cohort, --name...
				}
			case "flatpak":
				switch k {
				case "-y", "--assumeyes", "--noninteractive", "--user", "--system", "--or-update", "--app", "--runtime", "-v", "--verbose", "--arch", "--no-related", "--no-deps":
				default:
					return false // --from, --bundle, --image, --installation, --sideload-repo...
				}
			default:
				return false
			}
			continue
		}
		ops = append(ops, x)
	}
	if len(ops) == 0 {
		return false
	}
	for _, x := range ops {
		lx := strings.ToLower(x)
		if strings.Contains(x, "://") || strings.HasPrefix(x, "/") || strings.HasPrefix(x, ".") || strings.HasPrefix(x, "~") ||
			strings.Contains(x, "..") || strings.HasSuffix(lx, ".snap") || strings.HasSuffix(lx, ".flatpak") ||
			strings.HasSuffix(lx, ".flatpakref") || strings.HasSuffix(lx, ".flatpakrepo") || name == "snap" && strings.Contains(x, "/") {
			return false
		}
	}
	return name == "snap" || name == "flatpak"
}

// keygenCreates reports whether ssh-keygen, writing key, can only create a key that is not
// there yet: the line runs it without elevation and feeds its standard input nothing (no
// pipe, no `<`, `<<<` or heredoc), and no earlier command of the line names the key (moves
// or deletes it first). ssh-keygen asks "Overwrite (y/n)?" on standard input before it
// replaces a file and keeps the file unless it reads a yes (confirm_overwrite in OpenSSH's
// ssh-keygen.c); a new pair in ~/.ssh grants no one anything until its public half is
// installed somewhere, which is judged where it is (authorized_keys is a privFile).
func (a *analyzer) keygenCreates(key string) bool {
	if a.elevated > 0 || a.stdinFed() {
		return false
	}
	k := path.Clean(a.resolve(key))
	cmds := a.res.Commands
	if n := len(cmds); n > 0 {
		cmds = cmds[:n-1] // the ssh-keygen itself
	}
	for _, argv := range cmds {
		for _, x := range argv[1:] {
			if c := path.Clean(a.resolve(x)); c == k || c == k+".pub" || strings.HasPrefix(k, c+"/") {
				return false
			}
		}
	}
	for _, f := range a.res.Files {
		if c := path.Clean(a.resolve(f)); c == k || c == k+".pub" {
			return false
		}
	}
	return true
}

// bindServiceAsRoot reports whether argv is setcap granting cap_net_bind_service alone
// (bindServiceOnly) to one program: `sudo setcap cap_net_bind_service=+ep $(which caddy)`,
// as Caddy documents (https://caddyserver.com/docs/running#manual-installation). The
// capability lets the program listen on a port below 1024 and nothing else (capabilities(7)),
// and setcap needs root to grant it. The program is named by a path or by `$(which NAME)`;
// another capability, more than one file or anything else the line
// cannot resolve asks (or is refused: priv/accounts).
func bindServiceAsRoot(argv []string) bool {
	if len(argv) < 3 || base(argv[0]) != "setcap" || !bindServiceOnly(argv[1:]) {
		return false
	}
	ops := operands(joinSubst(argv[1:]))
	if len(ops) != 2 {
		return false
	}
	t := ops[1]
	if strings.HasPrefix(t, "$(") && strings.HasSuffix(t, ")") {
		inner := strings.Fields(t[2 : len(t)-1])
		if len(inner) != 2 || inner[0] != "which" {
			return false
		}
		return !strings.ContainsAny(inner[1], "$`()/;|&<>")
	}
	return !strings.ContainsAny(t, "$`*?[ ")
}

// joinSubst joins again the words of a command substitution's stand-in ("$(id -u)", which
// subst returns for a command it does not resolve) that field splitting cut apart when the
// substitution was not quoted (`sudo chown -R $(id -u):$(id -g) build`).
func joinSubst(words []string) []string {
	out := make([]string, 0, len(words))
	open := 0
	for _, w := range words {
		if open > 0 && len(out) > 0 {
			out[len(out)-1] += " " + w
		} else {
			out = append(out, w)
		}
		open += strings.Count(w, "$(") - strings.Count(w, ")")
		if open < 0 {
			open = 0
		}
	}
	return out
}
