package events

import (
	"strings"

	"github.com/kpemu/kpemu/machine"
)

// hcTracePrintk records a guest trace_printk() (HC_TRACE_PRINTK: x0 = the
// caller's address, x1 = the formatted text), as trace_vprintk's
// TRACE_PRINT entry, printed "<caller>: <text>" (trace_print_print: %ps,
// the symbol without offset). The text brings its own newline, which the
// entry's line already ends with.
func (t *Tracing) hcTracePrintk(cpu *machine.CPU) error {
	ip, text := cpu.X(0), cpu.X(1)
	cpu.SetX(0, 0)
	if !t.on.Load() {
		return nil
	}
	k := t.kp.Kernel()
	msg, err := k.ReadString(text, traceBufSize)
	if err != nil {
		return nil // a bad pointer writes nothing, as a faulting copy would
	}
	caller := "0x0"
	if s, _, ok := k.Kallsyms().LookupAddr(ip); ok {
		caller = s.Name
	}
	comm, pid := k.Current(cpu.Index())
	t.buf.add(traceEntry{ts: t.now(), cpu: cpu.Index(), comm: comm, pid: pid, text: caller + ": " + strings.TrimSuffix(msg, "\n")})
	return nil
}

// traceBufSize is TRACE_BUF_SIZE, the longest trace_printk() text.
const traceBufSize = 1024
