package plugin

import "syscall"

// mapNoReserve keeps a linear memory's reservation out of the kernel's overcommit accounting.
const mapNoReserve = syscall.MAP_NORESERVE
