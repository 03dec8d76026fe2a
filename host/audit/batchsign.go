package audit

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// A publisher signs each batch of events once. The events of a batch are the leaves of an
// RFC 6962 Merkle tree (golang.org/x/mod/sumdb/tlog: a leaf hashes 0x00‖event, a node
// 0x01‖left‖right); the signature covers the batch's size and tree hash, and each event carries
// its own inclusion proof in HeaderBatch. So every event is still checked alone, from its own
// bytes and headers, by the same Signers.Verify, and one ed25519 signature serves the whole
// batch (it costs 20–35 µs; hashing an event for the tree about 1 µs).

// HeaderBatch carries an event's place in its signed batch: "1 <index> <size> <proof>", where 1
// is the layout's version, index the event's leaf (from 0), size the number of events the
// signature covers, and proof the standard-base64 concatenation of the 32-byte hashes of the
// event's RFC 6962 inclusion proof ("-" for a batch of one, which needs none). An event without it is signed
// alone: HeaderSignature is then the signature over its data.
const HeaderBatch = "Palisade-Batch"

// batchLayout is HeaderBatch's version.
const batchLayout = "1"

// maxBatchLeaves bounds a batch (and a proof's claim): far above Options.BatchSize.
const maxBatchLeaves = 1 << 20

// batchContext starts the signed message of a batch. An event's JSON starts with '{', so a
// signature over a batch can never be taken for one over an event, nor the other way round.
const batchContext = "palisade-audit-batch-1\x00"

// batchMessage is what the signer signs for a batch of size leaves with tree hash root.
func batchMessage(size int64, root tlog.Hash) []byte {
	b := make([]byte, 0, len(batchContext)+8+len(root))
	b = append(b, batchContext...)
	b = binary.BigEndian.AppendUint64(b, uint64(size))
	return append(b, root[:]...)
}

// memHashes is an in-memory tlog hash store for one batch's tree.
type memHashes []tlog.Hash

func (m *memHashes) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x < 0 || x >= int64(len(*m)) {
			return nil, fmt.Errorf("audit: batch tree: hash %d not stored", x)
		}
		out[i] = (*m)[x]
	}
	return out, nil
}

// batchTree returns the tree hash of the leaves data and each leaf's HeaderBatch value
// without its signature.
func batchTree(data [][]byte) (tlog.Hash, []string, error) {
	n := int64(len(data))
	if n == 0 || n > maxBatchLeaves {
		return tlog.Hash{}, nil, fmt.Errorf("audit: batch of %d events", n)
	}
	st := make(memHashes, 0, 2*len(data))
	for i, d := range data {
		hs, err := tlog.StoredHashes(int64(i), d, &st)
		if err != nil {
			return tlog.Hash{}, nil, err
		}
		st = append(st, hs...)
	}
	root, err := tlog.TreeHash(n, &st)
	if err != nil {
		return tlog.Hash{}, nil, err
	}
	proofs := make([]string, len(data))
	var raw []byte
	for i := range data {
		p, err := tlog.ProveRecord(n, int64(i), &st)
		if err != nil {
			return tlog.Hash{}, nil, err
		}
		raw = raw[:0]
		for _, h := range p {
			raw = append(raw, h[:]...)
		}
		enc := "-" // a batch of one: no proof (and no trailing space for a header to trim)
		if len(raw) > 0 {
			enc = base64.StdEncoding.EncodeToString(raw)
		}
		proofs[i] = batchLayout + " " + strconv.Itoa(i) + " " + strconv.FormatInt(n, 10) + " " + enc
	}
	return root, proofs, nil
}

// errBatchHeader wraps a HeaderBatch value that cannot be read.
var errBatchHeader = errors.New("audit: bad " + HeaderBatch + " header")

// batchRoot checks an event's HeaderBatch value against its data and returns the signed
// message the batch's signature must cover.
func batchRoot(v string, data []byte) ([]byte, error) {
	f := strings.Split(v, " ")
	if len(f) != 4 || f[0] != batchLayout {
		return nil, fmt.Errorf("%w: want %q, then index, size and proof", errBatchHeader, batchLayout)
	}
	idx, err1 := strconv.ParseInt(f[1], 10, 64)
	size, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || size < 1 || size > maxBatchLeaves || idx < 0 || idx >= size {
		return nil, fmt.Errorf("%w: index %q of size %q", errBatchHeader, f[1], f[2])
	}
	var raw []byte
	var err error
	if f[3] != "-" {
		raw, err = base64.StdEncoding.DecodeString(f[3])
	}
	if err != nil || len(raw)%sha256.Size != 0 || (f[3] != "-" && len(raw) == 0) {
		return nil, fmt.Errorf("%w: proof is not base64 of 32-byte hashes", errBatchHeader)
	}
	proof := make(tlog.RecordProof, len(raw)/sha256.Size)
	for i := range proof {
		copy(proof[i][:], raw[i*sha256.Size:])
	}
	// The proof folds up to the one tree hash it implies; the signature then decides whether
	// that tree was signed. (tlog.CheckRecord needs the tree hash given; the tests check the
	// fold against it.)
	root, err := foldProof(proof, idx, size, tlog.RecordHash(data))
	if err != nil {
		return nil, err
	}
	return batchMessage(size, root), nil
}

// foldProof computes the RFC 6962 tree hash that leaf hash h at index idx of a tree of size
// leaves implies with proof (RFC 9162 §2.1.3.2).
func foldProof(proof tlog.RecordProof, idx, size int64, h tlog.Hash) (tlog.Hash, error) {
	fn, sn := idx, size-1
	r := h
	for _, p := range proof {
		if sn == 0 {
			return tlog.Hash{}, fmt.Errorf("%w: proof longer than the tree is deep", errBatchHeader)
		}
		if fn&1 == 1 || fn == sn {
			r = tlog.NodeHash(p, r)
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			r = tlog.NodeHash(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return tlog.Hash{}, fmt.Errorf("%w: proof shorter than the tree is deep", errBatchHeader)
	}
	return r, nil
}
