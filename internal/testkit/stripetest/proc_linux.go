package stripetest

import "syscall"

// sysProcAttr makes the kernel kill stripe-mock when the test binary dies,
// however it dies (a panic, a timeout, a kill), so no mock outlives go test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
