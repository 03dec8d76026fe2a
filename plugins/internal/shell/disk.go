package shell

import "strings"

// The read-only modes of the partitioning tools (issue 26, data/heldout/debian-extra calib:
// the tools' own manual pages list disks before they change them). fdisk -l, sfdisk --list or
// --dump, parted -l or a print script, and wipefs with no erase option (or with --no-act) only
// read the partition table and print it. Each tool is read with an allowlist: every option of
// the line must be one its manual page (util-linux 2.38 fdisk(8), sfdisk(8), wipefs(8); GNU
// parted 3.5 parted(8)) gives for listing, and one listing mode must be there; any other
// option, a script command that changes the table, or no listing mode at all (fdisk and
// parted then read their commands from the input, sfdisk its script) is the destroy/disk
// finding. mkfs, mkswap and blkdiscard have no such mode.

// diskOpts is what a tool takes while it lists: short flags without a value, with an optional
// one (only in the same word: -uS) and with a required one (the rest of the word or the next
// word, as getopt takes it), long options without a value or with an optional one ("=value"
// only) and with a required one, the options that are a listing mode, and, with erase, the
// options that erase unless noAct is there too.
type diskOpts struct {
	short, shortOpt, shortVal string
	long, longVal             map[string]bool
	modes                     map[string]bool // "-l", "--list", ...
	erase, noAct              map[string]bool
}

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

var diskTools = map[string]diskOpts{
	"fdisk": {short: "lxhV", shortOpt: "ucL", shortVal: "botCHS",
		long:    set("list", "list-details", "help", "version", "bytes", "color", "units", "compatibility"),
		longVal: set("sector-size", "output", "type", "cylinders", "heads", "sectors"),
		modes:   set("-l", "--list", "-x", "--list-details", "-h", "--help", "-V", "--version")},
	"sfdisk": {short: "ldJsVFTgGqnhv", shortVal: "oXY",
		long:    set("list", "dump", "json", "show-size", "verify", "list-free", "list-types", "show-geometry", "show-pt-geometry", "quiet", "no-act", "help", "version", "bytes", "color", "lock"),
		longVal: set("output", "label", "label-nested"),
		modes:   set("-l", "--list", "-d", "--dump", "-J", "--json", "-s", "--show-size", "-V", "--verify", "-F", "--list-free", "-T", "--list-types", "-g", "--show-geometry", "-G", "--show-pt-geometry", "-h", "--help", "-v", "--version")},
	"wipefs": {short: "aiJnpqhV", shortVal: "Oto",
		long:    set("all", "noheadings", "json", "no-act", "parsable", "quiet", "help", "version", "lock"),
		longVal: set("output", "types", "offset"),
		erase:   set("-a", "--all", "-o", "--offset"), noAct: set("-n", "--no-act")},
	// gdisk(8) -l lists; sgdisk(8)'s -p, -v, -i, -L and -O print, -P only pretends (GPT fdisk 1.0.9).
	"gdisk": {short: "l", modes: set("-l")},
	"sgdisk": {short: "pvLOP", shortVal: "i", long: set("print", "verify", "list-types", "print-mbr", "pretend", "help", "version"),
		longVal: set("info"), modes: set("-p", "--print", "-v", "--verify", "-i", "--info", "-L", "--list-types", "-O", "--print-mbr")},
	"parted": {short: "lsmjhv", long: set("list", "script", "machine", "json", "help", "version"),
		modes: set("-l", "--list", "-h", "--help", "-v", "--version")},
}

// partedReads are the words of a parted script that only print: print (of the table, its free
// space, all devices) and the unit it prints in.
var partedReads = set("print", "free", "all", "devices", "list", "unit", "s", "b", "kb", "mb", "mib", "gb", "gib", "tb", "tib", "%", "cyl", "chs", "compact")

// diskListing reports whether name with args only lists partition tables (see above). The
// caller also requires that nothing feeds the tool's standard input: fdisk and parted read
// their commands, and the answer to a question (parted's "Fix/Ignore?"), from it.
func diskListing(name string, args []string) bool {
	o, ok := diskTools[name]
	if !ok {
		return false
	}
	var flags, ops []string
	for i := 0; i < len(args); i++ {
		x := args[i]
		switch {
		case x == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(x, "--"):
			k, _, hasVal := strings.Cut(x[2:], "=")
			switch {
			case o.longVal[k]:
				if !hasVal {
					i++ // the value is the next word
				}
			case o.long[k]:
			default:
				return false
			}
			flags = append(flags, "--"+k)
		case strings.HasPrefix(x, "-") && len(x) > 1:
			for j := 1; j < len(x); j++ {
				c := x[j]
				switch {
				case strings.IndexByte(o.shortVal, c) >= 0:
					flags = append(flags, "-"+string(c))
					if j == len(x)-1 {
						i++ // -o COLUMNS; else the rest of the word is the value (-oDEVICE)
					}
					j = len(x)
				case strings.IndexByte(o.shortOpt, c) >= 0:
					flags = append(flags, "-"+string(c))
					j = len(x) // -uS: the rest of the word is the value, never the next word
				case strings.IndexByte(o.short, c) >= 0:
					flags = append(flags, "-"+string(c))
				default:
					return false
				}
			}
		default:
			ops = append(ops, x)
		}
	}
	has := func(m map[string]bool) bool {
		for _, f := range flags {
			if m[f] {
				return true
			}
		}
		return false
	}
	switch name {
	case "wipefs":
		// With no erase option wipefs lists the signatures; --no-act only says what it would erase.
		return !has(o.erase) || has(o.noAct)
	case "parted":
		// parted DEVICE [print|unit U ...]: the first operand is the device; any other word
		// changes the table (mklabel, mkpart, rm, resizepart, name, set, rescue ...).
		if len(ops) > 1 {
			for _, w := range ops[1:] {
				if !partedReads[strings.ToLower(w)] {
					return false
				}
			}
			return true
		}
		return has(o.modes)
	}
	return has(o.modes)
}
