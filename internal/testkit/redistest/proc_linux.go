package redistest

import "syscall"

// procAttr makes the kernel kill a cluster node when the test binary dies
// without running its cleanups (a panic, a -timeout, a signal), so that no
// redis-server outlives the tests that started it. The signal follows the
// death of the OS thread that forked the node, and Go ends a thread only when
// a goroutine exits while locked to it (runtime.LockOSThread), which tests
// using this package should not do.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
