// Package wrap rewrites one MCP server entry in a Claude Desktop, Cursor or Claude Code config
// file so the client launches the server through `palisade proxy`, and rewrites it back. It
// edits the file's bytes in place (only the entry's command and args values change), so unwrap
// restores the original file byte for byte; every write is validated first (the result parses,
// the entry reads as intended, and unwrapping the result gives back the input exactly), a .bak
// copy is kept, and the file is replaced atomically.
//
// It imports the standard library only.
package wrap
