package tracing

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"syscall"

	"github.com/kpemu/kpemu/kprobes"
)

// kpemu's extension to kprobe_events, for the interface Linux removed:
//
//	j[:[GRP/][EVENT]] SYM
//
// creates an event backed by a jprobe on SYM's entry, whose records hold
// the function's arguments by name, typed from the kernel image's DWARF.
// Lines Linux accepts are never parsed differently: Linux rejects a line
// starting with 'j'.

// createJprobeEvent parses and registers a j: line.
func (t *Tracing) createJprobeEvent(argv []string, pl *probeLog) error {
	head := argv[0]
	group, name := defaultGroup, ""
	if len(head) > 1 {
		if head[1] != ':' {
			return fmt.Errorf("%w: %q: want j[:[GRP/][EVENT]]", syscall.EINVAL, head)
		}
		g, n, err := parseEventName(head[2:], 2, pl)
		if err != nil {
			return err
		}
		if g != "" {
			group = g
		}
		name = n
	}
	pl.index = 1
	sym := argv[1]
	if strings.ContainsAny(sym, "+-%:") || len(t.kp.Kernel().Kallsyms().Lookup(sym)) == 0 {
		return parseError(pl, 0, errBadProbeAddr)
	}
	if len(t.kp.Kernel().Kallsyms().Lookup(sym)) > 1 {
		pl.logErr(0, errNonUniqSymbol)
		return fmt.Errorf("%w: symbol %s is not unique", syscall.EADDRNOTAVAIL, sym)
	}
	if len(argv) > 2 {
		pl.index = 2
		return parseError(pl, 0, errBadFetchArg)
	}
	params, err := t.kp.Kernel().FuncParams(sym)
	if err != nil {
		return parseError(pl, 0, errBadProbeAddr)
	}
	if name == "" {
		name = sanitizeEventName("j_" + sym + "_0")
	}
	ev := &event{group: group, name: name, isJprobe: true, params: params}
	tp := &traceProbe{ev: ev, symbol: sym}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.events[ev.key()]; old != nil {
		pl.index = 0
		pl.logErr(0, errEventExist)
		return fmt.Errorf("%w: %s exists", syscall.EEXIST, ev.key())
	}
	if err := t.createEventFiles(ev); err != nil {
		return err
	}
	ev.id = t.nextID
	t.nextID++
	if err := t.registerProbe(tp); err != nil {
		t.removeEventFiles(ev)
		pl.index = 1
		if pl.err == nil {
			pl.logErr(0, errFailRegProbe)
		}
		return err
	}
	t.addEvent(ev)
	ev.probes = append(ev.probes, tp)
	t.probes = append(t.probes, tp)
	return nil
}

// jprobeDispatcher records a j: event: the arguments by name, between its
// triggers as dispatcher does.
func (t *Tracing) jprobeDispatcher(tp *traceProbe) func([]kprobes.JprobeArg, *kprobes.Regs) {
	return func(args []kprobes.JprobeArg, regs *kprobes.Regs) {
		tp.nhit.Add(1)
		if !tp.ev.armed.Load() {
			return
		}
		if f := &tp.ev.top; f.enabled.Load() {
			t.jprobeTraceFunc(f, tp, args, regs)
		}
		if inst := tp.ev.inst.Load(); inst != nil {
			for _, f := range *inst {
				if f.enabled.Load() {
					t.jprobeTraceFunc(f, tp, args, regs)
				}
			}
		}
	}
}

// jprobeTraceFunc records a j: event's hit in one array.
func (t *Tracing) jprobeTraceFunc(ef *eventFile, tp *traceProbe, args []kprobes.JprobeArg, regs *kprobes.Regs) {
	ev := tp.ev
	post, rec := t.callTriggers(ef, regs, traceFlagIrqsOff)
	defer t.postTriggers(ef, post, regs, traceFlagIrqsOff)
	if !rec || !ef.ta.on.Load() {
		return
	}
	comm, pid := t.kp.Kernel().Current(regs.CPU)
	var w bytes.Buffer
	w.WriteString(ev.name)
	for _, a := range args {
		fmt.Fprintf(&w, " %s=%s", a.Name, formatParam(a))
	}
	// The record: __probe_ip, then each parameter at its size.
	raw := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+argsSize(ev)), regs.PC)
	for _, a := range args {
		for b := int64(0); b < a.Size; b++ {
			raw = append(raw, byte(a.Value>>(8*b)))
		}
	}
	e := traceEntry{kind: entryKprobe, pid: int32(pid), flags: traceFlagIrqsOff, ip: regs.PC, nlen: uint16(len(ev.name)), typ: uint16(ev.id), text: w.String(), raw: raw}
	ef.ta.commit(regs.CPU, comm, &e, traceEntryHeadSize+len(raw), &stackFrom{regs.PC, regs.X[29]})
}

// formatParam prints an argument by its C type: pointers in hex, signed
// integers as signed, at the type's width.
// The AAPCS64 leaves the upper bits of a narrower argument's register
// unspecified, so the value is cut to the type's size first.
func formatParam(a kprobes.JprobeArg) string {
	v := a.Value
	bits := uint(a.Size * 8)
	if bits > 0 && bits < 64 {
		v &= 1<<bits - 1
	}
	switch {
	case strings.HasSuffix(a.Type, "*"):
		return fmt.Sprintf("0x%x", v)
	case isSignedCType(a.Type):
		if bits > 0 && bits < 64 {
			return fmt.Sprintf("%d", int64(v<<(64-bits))>>(64-bits))
		}
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%d", v)
}

func isSignedCType(t string) bool {
	switch t {
	case "int", "long", "long int", "short", "char", "signed char", "long long", "long long int", "ssize_t", "loff_t", "pid_t", "s8", "s16", "s32", "s64":
		return true
	}
	return false
}
