package tracing

import (
	"bytes"
	"fmt"
	"log/slog"
	"sync"

	"github.com/kpemu/kpemu/kernel"
)

// printk_formats, after Linux 6.1's kernel/trace/trace_printk.c: the
// formats of the trace_printk() and trace_puts() calls whose format is a
// constant, from the pointers the calls keep in their __trace_printk_fmt
// sections. The kernel's come first, read from its image between
// __start___trace_bprintk_fmt and __stop___trace_bprintk_fmt; then the
// modules', which Linux copies out of each module as it comes
// (hold_module_trace_bprintk_format) and keeps, each string once, after
// the module goes. kpemu keeps each with the address it had in the first
// module that brought it, where Linux shows its copy's. The kernel's
// tracepoint_string()s, which Linux lists between the two, kpemu's guest
// has none of.

// printkFormat is a struct trace_bprintk_fmt.
type printkFormat struct {
	addr uint64
	fmt  string
}

// printkFormats is trace_bprintk_fmt_list.
type printkFormats struct {
	k   *kernel.Kernel
	log *slog.Logger

	mu   sync.Mutex // btrace_mutex
	list []printkFormat
}

// maxPrintkFormat bounds a format read from guest memory; Linux's
// formats are C strings of any length, but a trace_printk() formats into
// TRACE_BUF_SIZE (1024) bytes.
const maxPrintkFormat = 4096

// moduleCallback is module_trace_bprintk_format_notify: a
// coming module's formats join the list.
func (pf *printkFormats) moduleCallback(ev kernel.ModuleEvent) {
	if ev.State != kernel.ModuleComing || ev.Module.TraceBprintkFmt.End <= ev.Module.TraceBprintkFmt.Start {
		return
	}
	k := pf.k
	pf.mu.Lock()
	defer pf.mu.Unlock()
	r := ev.Module.TraceBprintkFmt
	for p := r.Start; p+8 <= r.End; p += 8 {
		addr, err := k.Read64(p)
		if err != nil || addr == 0 {
			continue
		}
		s, err := k.ReadString(addr, maxPrintkFormat)
		if err != nil {
			pf.log.Warn("printk_formats: reading a module's format", "module", ev.Module.Name, "addr", fmt.Sprintf("%#x", addr), "err", err)
			continue
		}
		known := false
		for _, f := range pf.list {
			if f.fmt == s {
				known = true
				break
			}
		}
		if !known {
			pf.list = append(pf.list, printkFormat{addr: addr, fmt: s})
		}
	}
}

// show is printk_formats (t_show): "0x<addr> : "<format>""
// with newlines, tabs and quotes escaped.
func (pf *printkFormats) show(w *bytes.Buffer) {
	k := pf.k
	syms := k.Kallsyms()
	start, ok1 := syms.LookupName("__start___trace_bprintk_fmt")
	stop, ok2 := syms.LookupName("__stop___trace_bprintk_fmt")
	if ok1 && ok2 {
		for p := start.Addr; p+8 <= stop.Addr; p += 8 {
			addr, err := k.Read64(p)
			if err != nil || addr == 0 {
				continue
			}
			if s, err := k.ReadString(addr, maxPrintkFormat); err == nil {
				printPrintkFormat(w, addr, s)
			}
		}
	}
	pf.mu.Lock()
	defer pf.mu.Unlock()
	for _, f := range pf.list {
		printPrintkFormat(w, f.addr, f.fmt)
	}
}

// printPrintkFormat is t_show's line for one format.
func printPrintkFormat(w *bytes.Buffer, addr uint64, s string) {
	fmt.Fprintf(w, "0x%x : \"", addr)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\n':
			w.WriteString(`\n`)
		case '\t':
			w.WriteString(`\t`)
		case '\\':
			w.WriteByte('\\')
		case '"':
			w.WriteString(`\"`)
		default:
			w.WriteByte(c)
		}
	}
	w.WriteString("\"\n")
}
