package detect

// The prefilter keeps regexps off the hot path. For every rule it derives, from the regexp's
// syntax tree, a set of literals of which every match must contain at least one. One pass over
// the text (a 1-, 2- and 3-byte gram table) finds which literals occur; only rules with a
// literal present run their regexp. Benign text usually holds none, so a scan of 1 KiB costs
// a few microseconds instead of one regexp pass per rule.

// gramIndex finds which of a fixed set of literals occur in a text: flat tables, no maps
// (map access is slow in Wasm), built at init from the generated literal list.
type gramIndex struct {
	one      [256][]int32 // literal ids of length 1, by byte
	has1     [256]bool
	pair     []uint8 // by 16-bit key of two bytes: pairLit | pairPrefix
	lits     []string
	rules    [][]int32 // literal id -> clause ids
	twoOff   []uint16  // offsets into twoIDs by 16-bit key (len 1<<16 + 1)
	threeOff []uint16  // offsets into threeIDs by 16-bit hash of the first three bytes
	twoIDs   []int32
	threeIDs []gramEntry
}

// gramEntry is a literal of 3+ bytes in its hash bucket, with its first four bytes (three for
// a 3-byte literal) packed little-endian so that most mismatches cost one compare.
type gramEntry struct {
	id        int32
	pre, mask uint32
}

func packPrefix(l string) (pre, mask uint32) {
	for k := 0; k < 4 && k < len(l); k++ {
		pre |= uint32(l[k]) << (8 * k)
		mask |= 0xFF << (8 * k)
	}
	return pre, mask
}

// pair flags: a 2-byte literal is these two bytes; a longer literal starts with them.
const (
	pairLit    = 1
	pairPrefix = 2
)

func hash3(a, b, c byte) uint32 { return (uint32(a)*31*31 + uint32(b)*31 + uint32(c)) & 0xFFFF }

// build indexes lits (literal id -> clause ids in rules) by length and first bytes with a
// counting sort.
func (g *gramIndex) build(lits []string, rules [][]int32) {
	g.lits, g.rules = lits, rules
	if len(lits) >= 1<<16 {
		panic("detect: too many prefilter literals")
	}
	key := func(l string) uint32 {
		if len(l) == 2 {
			return uint32(l[0])<<8 | uint32(l[1])
		}
		return hash3(l[0], l[1], l[2])
	}
	g.pair = make([]uint8, 1<<16)
	g.twoOff = make([]uint16, 1<<16+1)
	g.threeOff = make([]uint16, 1<<16+1)
	for id, l := range lits {
		switch len(l) {
		case 0:
		case 1:
			g.one[l[0]] = append(g.one[l[0]], int32(id))
			g.has1[l[0]] = true
		case 2:
			k := key(l)
			g.pair[k] |= pairLit
			g.twoOff[k+1]++
		default:
			g.pair[uint32(l[0])<<8|uint32(l[1])] |= pairPrefix
			g.threeOff[key(l)+1]++
		}
	}
	for k := 1; k <= 1<<16; k++ {
		g.twoOff[k] += g.twoOff[k-1]
		g.threeOff[k] += g.threeOff[k-1]
	}
	g.twoIDs = make([]int32, g.twoOff[1<<16])
	g.threeIDs = make([]gramEntry, g.threeOff[1<<16])
	var fill2, fill3 [1 << 16]uint16
	for id, l := range lits {
		switch {
		case len(l) == 2:
			k := key(l)
			g.twoIDs[g.twoOff[k]+fill2[k]] = int32(id)
			fill2[k]++
		case len(l) >= 3:
			k := key(l)
			pre, mask := packPrefix(l)
			g.threeIDs[g.threeOff[k]+fill3[k]] = gramEntry{int32(id), pre, mask}
			fill3[k]++
		}
	}
}

// scan calls found once for every literal that occurs in t; seen (one flag per literal)
// keeps a literal that occurs many times from being reported again.
func (g *gramIndex) scan(t string, seen []bool, found func(id int32)) {
	n := len(t)
	for i := 0; i < n; i++ {
		a := t[i]
		if g.has1[a] {
			for _, id := range g.one[a] {
				if !seen[id] {
					seen[id] = true
					found(id)
				}
			}
		}
		if i+1 >= n {
			break
		}
		k2 := uint32(a)<<8 | uint32(t[i+1])
		f := g.pair[k2]
		if f == 0 {
			continue // most pairs of ordinary text: one table load per byte
		}
		if f&pairLit != 0 {
			for _, id := range g.twoIDs[g.twoOff[k2]:g.twoOff[k2+1]] {
				if !seen[id] {
					seen[id] = true
					found(id)
				}
			}
		}
		if f&pairPrefix == 0 || i+2 >= n {
			continue
		}
		c := t[i+2]
		w := uint32(a) | uint32(t[i+1])<<8 | uint32(c)<<16
		if i+3 < n {
			w |= uint32(t[i+3]) << 24
		}
		h := hash3(a, t[i+1], c)
		for _, e := range g.threeIDs[g.threeOff[h]:g.threeOff[h+1]] {
			if w&e.mask != e.pre || seen[e.id] {
				continue
			}
			l := g.lits[e.id]
			if len(l) <= 4 || len(l) <= n-i && t[i+4:i+len(l)] == l[4:] {
				seen[e.id] = true
				found(e.id)
			}
		}
	}
}
