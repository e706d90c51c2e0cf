package mcpserve

import "syscall"

// callProcAttr makes a call process killed when the server's thread that
// started it ends (the server's end, a crash included): no call outlives
// the server, a write its client left least of all.
func callProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
