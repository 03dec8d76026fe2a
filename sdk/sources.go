package sdk

import "embed"

// Sources holds the SDK files vendored by host/scaffold, under their paths in this folder:
// rust/Cargo.toml, rust/src/*.rs, c/palisade.h, assemblyscript/{package.json,index.ts,assembly/*.ts}.
//
//go:embed rust/Cargo.toml rust/src/*.rs c/palisade.h
//go:embed assemblyscript/package.json assemblyscript/index.ts assemblyscript/assembly/*.ts
var Sources embed.FS
