//go:build !unix

package compose

import "syscall"

// sysProcAttr has nothing to set where there are no process groups; it keeps the package
// building so that lockbench can still attach to existing Redis deployments there.
func sysProcAttr() *syscall.SysProcAttr { return nil }
