//go:build !linux

package redistest

import "syscall"

// procAttr returns nil: only Linux can tie a child's life to its parent's, so
// elsewhere a test binary that dies before its cleanups leaves the nodes
// running.
func procAttr() *syscall.SysProcAttr {
	return nil
}
