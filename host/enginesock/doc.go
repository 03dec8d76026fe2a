// Package enginesock is the engine's Unix socket: the one door thin clients (the hook, and
// later the stdio proxy and `palisade mcp`) use to ask the engine process for a decision.
//
// The socket lives in a folder only the engine's user can create files in (e.g. /run/palisade,
// made by systemd's RuntimeDirectory or `palisade install`). A client trusts an answer only
// when the folder is owned by the engine's user (or root) and writable by nobody else, the
// socket file is owned by that user, and the process at the other end of the connection runs
// as that user (SO_PEERCRED): an agent running as another user can neither bind the path first
// nor answer for the engine. When the engine's user is the client's own user (a one-user demo),
// Dial says so (Info.SharedUser): that agent could have bound the socket itself.
//
// The server side (Listen, ConnContext, PeerFrom) gives the engine the caller's uid and pid for
// each request, so what it records names the OS user who asked.
//
// It imports nothing from host/.
package enginesock
