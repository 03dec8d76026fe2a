// Command datasplit builds the project's labelled set split (data/split/{train,dev,test}.jsonl)
// from the raw corpus (data/corpus/). Exact duplicates are dropped; near duplicates (same
// normalized key, or shingle Jaccard over a threshold found by MinHash LSH) are grouped, and
// whole groups go to one split by a salted stable hash, so test figures are not flattered by
// near-copies of training lines. See data/README.md.
//
// Usage:
//
//	go run ./tools/datasplit [-corpus data/corpus] [-out data/split] [-seed palisade-split-v1]
package main
