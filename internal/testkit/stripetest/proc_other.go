//go:build !linux

package stripetest

import "syscall"

// sysProcAttr has no parent-death signal outside Linux: call Stop from
// TestMain there.
func sysProcAttr() *syscall.SysProcAttr { return nil }
