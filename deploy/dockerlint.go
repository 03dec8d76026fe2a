package deploy

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Finding is one broken rule, at a 1-based line of the Dockerfile.
type Finding struct {
	Line int
	Rule string // "pinned-base", "user", "healthcheck", "add-url", "parse"
	Msg  string
}

func (f Finding) String() string { return fmt.Sprintf("line %d: %s: %s", f.Line, f.Rule, f.Msg) }

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case
	args string
}

// LintDockerfile checks the rules that matter for the Palisade image, a subset of hadolint's:
//
//   - pinned-base: every FROM names an image with an explicit tag other than latest (or a
//     digest), unless it names an earlier stage (hadolint DL3006, DL3007);
//   - user: the final stage sets USER, and not to root or 0 (DL3002);
//   - healthcheck: the final stage has a HEALTHCHECK that is not NONE;
//   - add-url: ADD never fetches a URL (DL3020's spirit: COPY, or a checked download in RUN).
//
// # Notes
//
// It is not a parser for every Dockerfile: heredocs and parser directives other than comments
// are not understood, and ARG values in FROM are not expanded (a FROM with ${...} is reported).
func LintDockerfile(r io.Reader) ([]Finding, error) {
	ins, err := parseDockerfile(r)
	if err != nil {
		return nil, err
	}
	var out []Finding
	stages := map[string]bool{}
	var last []instruction // the final stage's instructions
	for _, in := range ins {
		switch in.cmd {
		case "FROM":
			last = nil
			f := strings.Fields(in.args)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				f = f[1:]
			}
			if len(f) == 0 {
				out = append(out, Finding{in.line, "parse", "FROM without an image"})
				continue
			}
			image := f[0]
			if len(f) >= 3 && strings.EqualFold(f[1], "AS") {
				stages[strings.ToLower(f[2])] = true
			}
			if msg := unpinned(image, stages); msg != "" {
				out = append(out, Finding{in.line, "pinned-base", msg})
			}
		case "ADD":
			for _, a := range strings.Fields(in.args) {
				if strings.Contains(a, "://") {
					out = append(out, Finding{in.line, "add-url", fmt.Sprintf("ADD fetches %s: download in RUN with a checksum, or COPY", a)})
				}
			}
		}
		last = append(last, in)
	}
	user, health := "", ""
	userLine, healthLine := 0, 0
	for _, in := range last {
		switch in.cmd {
		case "USER":
			user, userLine = strings.TrimSpace(in.args), in.line
		case "HEALTHCHECK":
			health, healthLine = strings.TrimSpace(in.args), in.line
		}
	}
	end := 1
	if len(ins) > 0 {
		end = ins[len(ins)-1].line
	}
	name := strings.SplitN(user, ":", 2)[0]
	switch {
	case user == "":
		out = append(out, Finding{end, "user", "the final stage has no USER: the container runs as root"})
	case name == "root" || name == "0":
		out = append(out, Finding{userLine, "user", fmt.Sprintf("USER %s runs as root", user)})
	}
	switch {
	case health == "":
		out = append(out, Finding{end, "healthcheck", "the final stage has no HEALTHCHECK"})
	case strings.EqualFold(strings.Fields(health)[0], "NONE"):
		out = append(out, Finding{healthLine, "healthcheck", "HEALTHCHECK NONE"})
	}
	return out, nil
}

// unpinned says why image is not pinned, or "".
func unpinned(image string, stages map[string]bool) string {
	if stages[strings.ToLower(image)] && !strings.ContainsAny(image, ":@/") {
		return ""
	}
	if strings.Contains(image, "$") {
		return fmt.Sprintf("image %s uses a variable: the pin cannot be checked", image)
	}
	if strings.Contains(image, "@sha256:") {
		return ""
	}
	if image == "scratch" {
		return ""
	}
	// The tag follows the last colon after the last slash (a registry may have a port).
	name := image[strings.LastIndex(image, "/")+1:]
	i := strings.LastIndex(name, ":")
	if i < 0 {
		return fmt.Sprintf("image %s has no tag (it means latest)", image)
	}
	if tag := name[i+1:]; tag == "latest" || tag == "" {
		return fmt.Sprintf("image %s is not pinned", image)
	}
	return ""
}

// parseDockerfile splits r into instructions: comments and blank lines dropped, lines ending in
// a backslash joined with the next.
func parseDockerfile(r io.Reader) ([]instruction, error) {
	var out []instruction
	sc := bufio.NewScanner(r)
	n := 0
	var cur *instruction
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur == nil) {
			continue
		}
		cont := strings.HasSuffix(line, "\\")
		line = strings.TrimSuffix(line, "\\")
		if cur == nil {
			cmd, args, _ := strings.Cut(line, " ")
			cur = &instruction{line: n, cmd: strings.ToUpper(cmd), args: args}
		} else {
			cur.args += " " + line
		}
		if !cont {
			out = append(out, *cur)
			cur = nil
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out, sc.Err()
}
