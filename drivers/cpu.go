package drivers

import "time"

// CPULocker is a Locker whose lock library also runs outside lockbench's process (an external
// driver's adapter process): lockbench adds ExternalCPU to the client CPU it records, so that
// CPU per acquisition compares in-process and external libraries alike. Safe for concurrent use.
type CPULocker interface {
	Locker
	// ExternalCPU is the CPU time (user + sys) the library's processes have used so far, and
	// false if the OS will not say.
	ExternalCPU() (time.Duration, bool)
}
