//go:build !linux

package mcpserve

import "runtime/debug"

// ReleaseMemory gives the free heap back to the system.
func ReleaseMemory() { debug.FreeOSMemory() }
