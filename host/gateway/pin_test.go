package gateway_test

import "github.com/added060/palisade/host/bundle"

var bundlePin = bundle.Pin
