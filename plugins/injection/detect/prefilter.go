package detect

// The prefilter keeps regexps off the hot path. For every rule it derives, from the regexp's
// syntax tree, a set of literals of which every match must contain at least one. One pass over
// the text (a 1-, 2- and 3-byte gram table) finds which literals occur; only rules with a
// literal present run their regexp. Benign text usually holds none, so a scan of 1 KiB costs
// a few microseconds instead of one regexp pass per rule.

// gramIndex finds which of a fixed set of literals occur in a text: flat tables, no maps
// (map access is slow in Wasm), built at init from the generated literal list. A literal of
// three or more bytes is filed under one of its byte pairs, the one rarest in ordinary tool-call
// text (chosen by the generator from the benign training records: genLitKey), so most
// positions of a benign text hit no pair at all and cost one table load.
type gramIndex struct {
	one    [256][]int32 // literal ids of length 1, by byte
	has1   [256]bool
	pair   []uint8 // by 16-bit key of two bytes: pairLit | pairKey
	lits   []string
	rules  [][]int32 // literal id -> clause ids
	twoOff []uint16  // offsets into twoIDs by 16-bit pair (len 1<<16 + 1)
	keyOff []uint16  // offsets into keyIDs by 16-bit pair
	twoIDs []int32
	keyIDs []gramEntry
}

// gramEntry is a literal of 3+ bytes filed under the pair at offset off, and its length: a
// literal that cannot fit around the pair is passed over without loading it (issue 27: the
// pairs of ordinary words carry dozens of literals).
type gramEntry struct {
	id  int32
	off uint16
	ln  uint16
}

// pair flags: a 2-byte literal is these two bytes; a longer literal is filed under them.
const (
	pairLit = 1
	pairKey = 2
)

// build indexes lits (literal id -> clause ids in rules; keys: the offset of the pair each
// literal of 3+ bytes is filed under) with a counting sort.
func (g *gramIndex) build(lits []string, rules [][]int32, keys []uint8) {
	g.lits, g.rules = lits, rules
	if len(lits) >= 1<<16 || len(keys) != len(lits) {
		panic("detect: bad prefilter literal tables")
	}
	for _, l := range lits {
		if len(l) >= 1<<16 {
			panic("detect: prefilter literal of 64 KiB or more")
		}
	}
	pairAt := func(l string, off int) uint32 { return uint32(l[off])<<8 | uint32(l[off+1]) }
	g.pair = make([]uint8, 1<<16)
	g.twoOff = make([]uint16, 1<<16+1)
	g.keyOff = make([]uint16, 1<<16+1)
	for id, l := range lits {
		switch len(l) {
		case 0:
		case 1:
			g.one[l[0]] = append(g.one[l[0]], int32(id))
			g.has1[l[0]] = true
		case 2:
			k := pairAt(l, 0)
			g.pair[k] |= pairLit
			g.twoOff[k+1]++
		default:
			k := pairAt(l, int(keys[id]))
			g.pair[k] |= pairKey
			g.keyOff[k+1]++
		}
	}
	for k := 1; k <= 1<<16; k++ {
		g.twoOff[k] += g.twoOff[k-1]
		g.keyOff[k] += g.keyOff[k-1]
	}
	g.twoIDs = make([]int32, g.twoOff[1<<16])
	g.keyIDs = make([]gramEntry, g.keyOff[1<<16])
	fill2 := make([]uint16, 1<<16)
	fillK := make([]uint16, 1<<16)
	for id, l := range lits {
		switch {
		case len(l) == 2:
			k := pairAt(l, 0)
			g.twoIDs[g.twoOff[k]+fill2[k]] = int32(id)
			fill2[k]++
		case len(l) >= 3:
			k := pairAt(l, int(keys[id]))
			g.keyIDs[g.keyOff[k]+fillK[k]] = gramEntry{int32(id), uint16(keys[id]), uint16(len(l))}
			fillK[k]++
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
		if f&pairKey == 0 {
			continue
		}
		for _, e := range g.keyIDs[g.keyOff[k2]:g.keyOff[k2+1]] {
			st := i - int(e.off)
			if st < 0 || st+int(e.ln) > n || seen[e.id] {
				continue
			}
			if l := g.lits[e.id]; t[st:st+len(l)] == l {
				seen[e.id] = true
				found(e.id)
			}
		}
	}
}
