//go:build !linux

package mcpserve

import "syscall"

// callProcAttr is nothing where there is no parent-death signal.
func callProcAttr() *syscall.SysProcAttr { return nil }
