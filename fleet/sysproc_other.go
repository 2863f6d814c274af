//go:build !linux

package fleet

import "syscall"

// childAttr: without Pdeathsig outside Linux, a parent killed with SIGKILL leaves its children
// to finish their run (bounded by --duration) and exit on their own.
func childAttr() *syscall.SysProcAttr { return nil }
