package cmd_test

import "unsafe"

// unsafePointer reads an inotify event header out of a read buffer.
func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }
