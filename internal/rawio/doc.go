// Package rawio reads and writes a pipe with raw system calls, waiting in Go's poller when it is
// not ready, so that a process that is often idle does not wake the runtime's monitor thread
// (sysmon) with every read and write.
//
// Why: a system call made through syscall.Syscall (what an *os.File's Read and Write make)
// enters the scheduler's system-call state: made while the process was idle it wakes sysmon,
// which then polls every 20 µs, and one that the kernel preempts on a CPU shared with another
// process looks blocked to sysmon, which hands the processor to another thread. lockbench and an
// external driver's adapter share the client's CPU and take turns at it: measured with the
// redsync adapter placed on lockbench's CPU (perf sched:sched_switch -g, 2026-11-28), the two
// processes' sysmon threads and the hand-offs they made were most of the 2.5 context switches an
// acquisition on that CPU, where lockbench running redsync in process switched 0.02 times. A
// read or write of a non-blocking pipe never blocks, so nothing needs that state. lockcore's raw
// connections (lockcore/rawconn_linux.go) do the same for its sockets.
package rawio
