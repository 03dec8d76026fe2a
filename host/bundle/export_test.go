package bundle

import "github.com/nats-io/nats.go/jetstream"

// SetAfterInfo makes s call f between its first look at the object's info and the read of the
// object, so a test can put another object in between.
func SetAfterInfo(s *ObjectStoreSource, f func(*jetstream.ObjectInfo)) { s.afterInfo = f }

// CheckDescribe is checkDescribe, the activation's ABI check of one plugin.
var CheckDescribe = checkDescribe
