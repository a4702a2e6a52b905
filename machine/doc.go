// Package machine is kpemu's AArch64 machine: vCPUs implementing the A64
// integer instruction set at EL0 and EL1, the exception model, system
// registers, a physical memory map with RAM and a PL011 UART laid out like
// QEMU's virt board, and PSCI over HVC.
//
// The interpreter decodes each guest instruction once into a cached,
// pre-decoded form kept per 4 KiB physical page. Every store that lands in a
// page holding decoded code (a guest store, DC ZVA, or the host's WriteMem)
// drops that page's cache, so patched text takes effect on the next fetch.
//
// Execution is deterministic: one host goroutine interleaves the powered-on
// vCPUs in fixed quanta, and the generic timer counts retired instructions.
//
// # Concurrency
//
// A Machine is driven by one goroutine at a time through Run or Step. While
// that goroutine runs the guest, other goroutines may touch guest state only
// inside Exclusive, which stops every vCPU at an instruction boundary. Host
// memory and register accessors (ReadMem, WriteMem, CPU.X, ...) do not lock:
// call them from inside Exclusive, from a hostcall handler, or while nothing
// runs.
//
// The MMU is off (VA == PA); every instruction fetch and data access goes
// through CPU.translate so that a page-table walker can slot in later.
package machine
