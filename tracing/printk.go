package tracing

import (
	"strings"

	"github.com/kpemu/kpemu/machine"
)

// hcTracePrintk records a guest trace_printk() (HC_TRACE_PRINTK: x0 = the
// caller's address, x1 = the formatted text), as trace_vprintk's
// TRACE_PRINT entry, printed "<caller>: <text>" (trace_print_print: %ps,
// the symbol without offset). The text brings its own newline, which the
// entry's line already ends with. With the trace_printk option off it
// records nothing (trace_printk_control). Linux expands the buffer when
// code that uses trace_printk loads (trace_printk_init_buffers); kpemu
// learns of it at the first call.
func (t *Tracing) hcTracePrintk(cpu *machine.CPU) error {
	ip, text := cpu.X(0), cpu.X(1)
	cpu.SetX(0, 0)
	t.top.updateBuffers()
	if !t.top.on.Load() || !t.top.flag(optTracePrintk) {
		return nil
	}
	k := t.kp.Kernel()
	msg, err := k.ReadString(text, traceBufSize)
	if err != nil {
		return nil // a bad pointer writes nothing, as a faulting copy would
	}
	comm, pid := k.Current(cpu.Index())
	e := traceEntry{kind: entryPrint, pid: int32(pid), flags: traceFlagIrqsOff, ip: ip, text: strings.TrimSuffix(msg, "\n"),
		raw: printRecord(ip, msg, "\x00", printEntryHeadSize+len(msg)+1)}
	// trace_vprintk's stack (the stacktrace option) starts at the caller
	// of __trace_printk, whose frame x29 is.
	var from *stackFrom
	if fp := cpu.X(29); fp != 0 {
		if lr, err := k.Read64(fp + 8); err == nil {
			next, _ := k.Read64(fp)
			from = &stackFrom{lr, next}
		}
	}
	t.top.commit(cpu.Index(), comm, &e, printEntryHeadSize+len(msg)+1, from)
	return nil
}

// traceBufSize is TRACE_BUF_SIZE, the longest trace_printk() text.
const traceBufSize = 1024
