package mcpserve

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ReleaseMemory gives back to the system what an idle server does not
// need: the free heap, and the pages of its own executable that start-up
// and the last call touched (clean file pages, read again from the page
// cache when next needed: madvise MADV_PAGEOUT). A Go binary with
// Kubernetes' API types has tens of megabytes of them resident after its
// package initialisation alone.
func ReleaseMemory() {
	debug.FreeOSMemory()
	exe, err := os.Executable()
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(lines.Text())
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		start, end, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		from, err1 := strconv.ParseUint(start, 16, 64)
		to, err2 := strconv.ParseUint(end, 16, 64)
		if err1 != nil || err2 != nil || to <= from {
			continue
		}
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(from), uintptr(to-from), unix.MADV_PAGEOUT)
	}
}
