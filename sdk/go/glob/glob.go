// Package glob matches tool names, servers and paths against patterns: `*` matches any run of
// characters except `/`, `**` matches any run including `/`, `?` matches exactly one character
// except `/`, and everything else matches itself. It is pure Go, shared by the host (stage
// matching) and plugins (rules), and allocates nothing when matching.
package glob

// Match reports whether name matches pattern.
func Match(pattern, name string) bool {
	px, nx := 0, 0
	// Backtracking points for the last * and the last **.
	starP, starN := -1, -1
	dstarP, dstarN := -1, -1
	for nx < len(name) || px < len(pattern) {
		if px < len(pattern) {
			c := pattern[px]
			switch {
			case c == '*' && px+1 < len(pattern) && pattern[px+1] == '*':
				dstarP, dstarN = px, nx
				starP, starN = -1, -1
				px += 2
				continue
			case c == '*':
				starP, starN = px, nx
				px++
				continue
			case c == '?':
				if nx < len(name) && name[nx] != '/' {
					px++
					nx++
					continue
				}
			default:
				if nx < len(name) && name[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		// Mismatch: extend the innermost star, if it can take one more character.
		if starP >= 0 && starN < len(name) && name[starN] != '/' {
			starN++
			px, nx = starP+1, starN
			continue
		}
		if dstarP >= 0 && dstarN < len(name) {
			dstarN++
			px, nx = dstarP+2, dstarN
			starP, starN = -1, -1
			continue
		}
		return false
	}
	return true
}

// Any reports whether name matches any of patterns. An empty list matches everything.
func Any(patterns []string, name string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if Match(p, name) {
			return true
		}
	}
	return false
}
