package deploy

import _ "embed"

// Unit is palisade.service, the systemd unit `palisade install` writes.
//
//go:embed palisade.service
var Unit string
