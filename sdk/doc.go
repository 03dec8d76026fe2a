// Package sdk embeds the sources of the plugin SDKs that are not Go (the Rust crate, the C
// header, the AssemblyScript package) so `palisade plugin new` can vendor them into a new
// plugin project that then builds on its own. The SDKs themselves live in the folders beside
// this file; ABI.md is the contract they implement.
//
// It imports only embed; host/scaffold imports it.
package sdk
