// Package gdbstub is a GDB remote serial protocol stub for kpemu's
// AArch64 machine, so that gdb (Debian's gdb-multiarch) can attach to a
// running guest kernel with `target remote`.
//
// Serve owns the execution of a Target. With no debugger attached it lets
// the guest run freely; a connecting debugger halts it, and from then on the
// guest runs only when the debugger continues or steps it. Each vCPU is one
// GDB thread (thread ids 1..N). Detaching, killing or dropping the
// connection removes the debugger's breakpoints and lets the guest run
// freely again; the emulator itself keeps running. One debugger is served
// at a time: while one is attached, one more connection waits for its turn
// (so that a quick reconnect works) and any further ones are refused.
//
// GDB's software breakpoints (Z0) are implemented as host breakpoints, like
// its hardware breakpoints (Z1): the stub never patches guest memory, so
// that its breakpoints cannot interfere with the BRK instructions that
// kprobes arm in kernel text, and the guest cannot see them.
//
// # Serialisation
//
// Only the goroutine running Serve calls Target methods, and never while a
// Target.Run call is in flight: the guest is either running (and the stub
// waits for Run to return) or halted (and the stub reads and writes its
// state). An interrupt from the debugger cancels the Run context.
//
// The protocol coverage is what gdb needs to debug an all-stop multi-CPU
// bare-metal target: qSupported, QStartNoAckMode, the target description
// (qXfer:features:read), registers (g, G, p, P), memory (m, M, X), threads
// (H, T, qC, qfThreadInfo, qsThreadInfo, qThreadExtraInfo), execution
// (c, s, C, S, vCont, Ctrl-C), breakpoints and watchpoints (Z0-Z4), detach
// (D) and kill (k). Unknown packets get the empty reply, as the protocol
// requires.
package gdbstub
