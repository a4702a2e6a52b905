package tracing

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/filter"
)

// Fetching argument values at a hit and printing them as Linux's
// print_type_* functions do (kernel/trace/trace_probe.c).

// maxStringLen bounds a fetched string (MAX_STRING_SIZE is PATH_MAX).
const maxStringLen = 4096

// fetcher reads what a fetch program needs on the vCPU that hit.
type fetcher struct {
	t    *Tracing
	regs *kprobes.Regs
	hit  *tpHit // a static event's record (tracepoint.go); nil for the probe events
	// raw is the record being built beside the text, after its struct
	// trace_entry, as store_trace_args lays it out: the probe's head
	// (ip, or func and ret_ip), each argument's value at its offset in
	// the fixed part (a string's __data_loc there), then the strings,
	// each with its NUL, in the dynamic area. fix is where the next
	// argument's fixed part goes.
	raw []byte
	fix int
	// dyn is where the dynamic area starts in raw; late are the
	// arguments whose __data_loc and text wait for finish.
	dyn  int
	late []lateArg
	// args are the hit probe's own arguments (traceProbe.args), which
	// a filter reads instead of the event's; nil: the event's.
	args []*probeArg
	// uprobe is a uprobe event's hit: every read is of user memory (the
	// uprobes' probe_mem_read is copy_from_user), and @+OFFSET is
	// relative to where the probed file is loaded. nil for the others.
	uprobe *uprobeHit
}

// uprobeHit is what a uprobe event's fetch needs of its hit
// (uprobe_dispatch_data).
type uprobeHit struct {
	base uint64 // bp_addr - the probe's offset: translate_user_vaddr's base
}

// lateArg is a dynamic argument whose __data_loc keeps what Linux 6.1's
// store_trace_args set before the fetch, make_data_loc(maxlen, dyndata):
// the room the record has left for dynamic data, and where it starts. Its
// "%s" then reads on into whatever the arguments after it stored there,
// up to a NUL; with no room left it prints "(fault)". Two kinds:
//
//   - a symstr: fetch_store_symstring's sprint_symbol writes the name and
//     its NUL, but the argument takes only the name's length (the NUL is
//     the next dynamic argument's first byte) and leaves the __data_loc;
//     the oracle printed a="0xffff...ksys_read+0x7c/0x1140x00x0" for
//     a=%x0:symstr with three more symstrs after it;
//   - a string (or symstr) whose fetch faulted before the store (in a
//     dereference that computes the address): it stores nothing (and
//     __get_data_size counted nothing for it); the oracle printed
//     s="ksys_read+0x7c/0x114" for s=+0(+0(%x2)):string t=%lr:symstr,
//     and an array's other elements, never stored, (fault).
type lateArg struct {
	wpos int  // where its text goes in the line
	dl   int  // its __data_loc in raw
	pos  int  // its offset in raw
	good bool // a symstr stored: its NUL is reserved at the end
}

// startRaw makes f.raw for ev's record in buf's memory (fresh, if it
// has no room): head bytes of the probe's fields, then the arguments'
// fixed part, zeroed.
func (f *fetcher) startRaw(ev *event, head int, buf []byte) {
	n := head + argsSize(ev)
	if cap(buf) < n+32 {
		buf = make([]byte, 0, n+32)
	}
	f.raw = buf[:n]
	clear(f.raw)
	f.fix = head
	f.dyn = n
}

// finish completes the record and its line after the arguments: the
// dynamic area gets the bytes __get_data_size counted for each symstr
// and the last one did not take (its NUL, zeroes for the rest), each
// late argument its __data_loc and, in w, its text.
func (f *fetcher) finish(w *bytes.Buffer) {
	if len(f.late) == 0 || f.raw == nil {
		return
	}
	for _, a := range f.late {
		if a.good {
			f.raw = append(f.raw, 0)
		}
	}
	dsize := len(f.raw) - f.dyn
	line := w.Bytes()
	var out []byte
	last := 0
	for _, a := range f.late {
		maxlen := dsize - (a.pos - f.dyn)
		binary.LittleEndian.PutUint32(f.raw[a.dl:], uint32(maxlen)<<16|uint32(traceEntryHeadSize+a.pos))
		out = append(out, line[last:a.wpos]...)
		last = a.wpos
		if maxlen == 0 {
			out = append(out, "(fault)"...)
			continue
		}
		s := f.raw[a.pos:]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		out = append(out, '"')
		out = append(out, s...)
		out = append(out, '"')
	}
	out = append(out, line[last:]...)
	w.Reset()
	w.Write(out)
}

// lateFault handles element i of a string argument whose fetch faulted
// before its store: the first element waits for finish (lateArg), the
// others were never stored, their __data_loc zero: "(fault)".
func (f *fetcher) lateFault(w *bytes.Buffer, i int) {
	if f.raw == nil {
		w.WriteString("(fault)")
		return
	}
	if i == 0 {
		f.late = append(f.late, lateArg{wpos: w.Len(), dl: f.fix, pos: len(f.raw)})
		return
	}
	binary.LittleEndian.PutUint32(f.raw[f.fix+4*i:], 0)
	w.WriteString("(fault)")
}

// putRaw stores the element i of pa's fixed part: size bytes of v.
func (f *fetcher) putRaw(pa *probeArg, i int, v uint64) {
	if f.raw == nil {
		return
	}
	off := f.fix + i*pa.typ.size
	for b := 0; b < pa.typ.size; b++ {
		f.raw[off+b] = byte(v >> (8 * b))
	}
}

// putString stores s as element i of a string argument: its
// __data_loc (length with the NUL << 16 | offset from the record's
// start) and its bytes in the dynamic area; fault stores the empty
// __data_loc that prints "(fault)".
func (f *fetcher) putString(pa *probeArg, i int, s string, fault bool) {
	if f.raw == nil {
		return
	}
	off := traceEntryHeadSize + len(f.raw)
	n := 0
	if !fault {
		n = len(s) + 1
		f.raw = append(f.raw, s...)
		f.raw = append(f.raw, 0)
	}
	binary.LittleEndian.PutUint32(f.raw[f.fix+4*i:], uint32(n)<<16|uint32(off))
}

func (f *fetcher) reg(i uint64) uint64 {
	switch {
	case i < 31:
		return f.regs.X[i]
	case i == 31:
		return f.regs.SP
	case i == 32:
		return f.regs.PC
	default:
		return f.regs.Pstate
	}
}

// readMem reads guest memory the way Linux's nofault accessors do: a
// user read (copy_from_user_nofault, for +u and ustring) faults on a
// kernel address and goes through the hit vCPU's translation, so it sees
// the current process's pages (an unmapped or not yet faulted-in page
// faults); a kernel read (copy_from_kernel_nofault) faults on a user
// address, as an EL1 access with PAN set would, and reads a kernel
// address (the TTBR1 half, from PAGE_OFFSET up) where the kernel maps it.
// Addresses in neither half fault.
func (f *fetcher) readMem(addr uint64, p []byte, user bool) bool {
	end := addr + uint64(len(p))
	// An event probe's read of its attached event's record (a char
	// array field's address) is served from the record the hit has,
	// which a record the host built (a syscalls event's) is only.
	if h := f.hit; h != nil && h.addr != 0 && !user && addr >= h.addr && end <= h.addr+uint64(len(h.rec)) && end >= addr {
		copy(p, h.rec[addr-h.addr:])
		return true
	}
	k := f.t.kp.Kernel()
	if user || f.uprobe != nil {
		if addr >= kernel.TaskSize || end > kernel.TaskSize || end < addr {
			return false
		}
		m := k.Machine()
		if f.regs.CPU < 0 || f.regs.CPU >= m.NumCPUs() {
			return false
		}
		return m.CPU(f.regs.CPU).ReadVirt(addr, p) == nil
	}
	if addr < kernel.PageOffset {
		return false
	}
	return k.ReadMem(addr, p) == nil
}

// value runs the program; ok is false when a memory read faulted. For
// string programs the last step's address (or immediate data) is used by
// the caller.
func (f *fetcher) value(code []fetchInsn) (v uint64, data string, isData, ok bool) {
	for i, in := range code {
		switch in.op {
		case opReg:
			v = f.reg(in.param)
		case opStackP:
			v = f.regs.SP
		case opStack:
			var b [8]byte
			if !f.readMem(f.regs.SP+8*in.param, b[:], false) {
				if f.uprobe != nil { // get_user_stack_nth: 0 on a fault
					v = 0
					continue
				}
				return 0, "", false, false
			}
			v = binary.LittleEndian.Uint64(b[:])
		case opFileOffs:
			if f.uprobe != nil {
				v = f.uprobe.base + in.imm
			}
		case opRetval:
			v = f.regs.X[0]
		case opArg:
			if in.param < 8 {
				v = f.regs.X[in.param]
			} else {
				v = 0
			}
		case opImm:
			v = in.imm
		case opTPArg:
			v = f.eventField(in.field)
		case opTPComm:
			v = f.t.kp.Kernel().CurrentCommAddr(f.regs.CPU)
		case opComm:
			comm, _ := f.t.kp.Kernel().Current(f.regs.CPU)
			return 0, comm, true, true
		case opData:
			return 0, in.data, true, true
		case opDeref, opUDeref:
			// The address is the value so far plus the offset; the
			// final dereference is done by the caller at the right size.
			v = uint64(int64(v) + in.offset)
			if i != len(code)-1 {
				var b [8]byte
				if !f.readMem(v, b[:], in.op == opUDeref) {
					return 0, "", false, false
				}
				v = binary.LittleEndian.Uint64(b[:])
			}
		}
	}
	return v, "", false, true
}

// eventField is get_event_field: an event probe's $FIELD, read from the
// attached event's record. A char array gives its address in the guest
// (the record's, as the guest passed it), a char * (FILTER_PTR_STRING)
// the pointer (the oracle's 6.1.192 printed fn=0xffffd1ebcf75 for
// fn=$filename, where 6.1.158's source reads *(char *)addr), and a
// number its value at its size, sign-extended when signed.
func (f *fetcher) eventField(fd *epField) uint64 {
	if f.hit == nil || fd == nil || fd.offset+max(fd.size, 4) > len(f.hit.rec) {
		return 0
	}
	r := f.hit.rec
	switch {
	case fd.dyn: // FILTER_DYN_STRING: where its __data_loc points
		return f.hit.addr + uint64(binary.LittleEndian.Uint32(r[fd.offset:])&0xffff)
	case fd.str:
		return f.hit.addr + uint64(fd.offset)
	case fd.ptrStr:
		return r.u64(fd.offset)
	}
	switch fd.size {
	case 1:
		if fd.signed {
			return uint64(int64(int8(r[fd.offset])))
		}
		return uint64(r[fd.offset])
	case 2:
		v := binary.LittleEndian.Uint16(r[fd.offset:])
		if fd.signed {
			return uint64(int64(int16(v)))
		}
		return uint64(v)
	case 4:
		v := binary.LittleEndian.Uint32(r[fd.offset:])
		if fd.signed {
			return uint64(int64(int32(v)))
		}
		return uint64(v)
	}
	return r.u64(fd.offset)
}

// format appends " name=value" for one argument, as trace_probe_print_args.
func (f *fetcher) format(w *bytes.Buffer, pa *probeArg) {
	// Writes, not fmt: this runs at every hit of an event, and fmt's
	// boxed arguments were two allocations an argument.
	w.WriteByte(' ')
	w.WriteString(pa.name)
	w.WriteByte('=')
	last := pa.code[len(pa.code)-1].op
	isDeref := last == opDeref || last == opUDeref
	user := last == opUDeref // the last dereference reads user memory
	v, data, isData, ok := f.value(pa.code)
	n := max(pa.count, 1)
	defer func() { f.fix += n * pa.typ.size }()
	if pa.count > 0 {
		w.WriteByte('{')
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			w.WriteByte(',')
		}
		switch {
		case pa.typ.symstr: // FETCH_OP_ST_SYMSTR: sprint_symbol of the value
			s, good := f.symstr(v, ok, isDeref)
			if f.raw != nil { // finish stores it and writes its text
				f.late = append(f.late, lateArg{wpos: w.Len(), dl: f.fix + 4*i, pos: len(f.raw), good: good})
				if good {
					f.raw = append(f.raw, s...)
				}
				continue
			}
			if good {
				writeQuoted(w, s)
			} else {
				w.WriteString("(fault)")
			}
			continue
		case pa.typ.str:
			switch {
			case isData:
				f.putString(pa, i, data, false)
				writeQuoted(w, data)
			case !ok: // a dereference before the store faulted
				f.lateFault(w, i)
			default:
				addr := v
				if pa.count > 0 { // an array of string pointers
					var b [8]byte
					if !f.readMem(v+uint64(8*i), b[:], user) {
						if i == 0 { // the first pointer: before any store
							f.lateFault(w, i)
						} else {
							f.putString(pa, i, "", true)
							w.WriteString("(fault)")
						}
						continue
					}
					addr = binary.LittleEndian.Uint64(b[:])
				}
				// ustring and +u strings are user strings
				// (strncpy_from_user_nofault), the others kernel
				// ones (strncpy_from_kernel_nofault).
				s, good := f.readString(addr, pa.typ.user || user)
				if !good {
					f.putString(pa, i, "", true)
					w.WriteString("(fault)")
				} else {
					f.putString(pa, i, s, false)
					writeQuoted(w, s)
				}
			}
			continue
		case !ok:
			f.printScalar(w, pa, i, 0)
			continue
		}
		x := v
		if isDeref || pa.count > 0 {
			addr := v + uint64(i*pa.typ.size)
			if !isDeref {
				addr = v
			}
			b := make([]byte, 8)
			if !f.readMem(addr, b[:pa.typ.size], user) {
				f.printScalar(w, pa, i, 0)
				continue
			}
			x = binary.LittleEndian.Uint64(b)
		}
		f.printScalar(w, pa, i, x)
	}
	if pa.count > 0 {
		w.WriteByte('}')
	}
}

// symstr is a symstr argument's string: the symbol of the value (read
// from kernel memory when the program ends in a dereference), as
// sprint_symbol prints it; false when the value could not be fetched.
func (f *fetcher) symstr(v uint64, ok, deref bool) (string, bool) {
	if !ok {
		return "", false
	}
	if deref {
		var b [8]byte
		if !f.readMem(v, b[:], false) {
			return "", false
		}
		v = binary.LittleEndian.Uint64(b[:])
	}
	return f.t.kp.Kernel().Kallsyms().Format(v), true
}

// readString reads a NUL-terminated string; false if it faults before
// the NUL.
func (f *fetcher) readString(addr uint64, user bool) (string, bool) {
	var out []byte
	var c [1]byte
	for len(out) < maxStringLen-1 {
		if !f.readMem(addr+uint64(len(out)), c[:], user) {
			return "", false
		}
		if c[0] == 0 {
			return string(out), true
		}
		out = append(out, c[0])
	}
	return string(out), true
}

// printScalar prints element i of pa, x, and stores it in the record
// as Linux stores it: cut to the type's size, a bitfield extracted.
func (f *fetcher) printScalar(w *bytes.Buffer, pa *probeArg, i int, x uint64) {
	bits := pa.typ.size * 8
	if bits < 64 {
		x &= 1<<bits - 1
	}
	if pa.bitW > 0 {
		x = (x << (64 - bits + (bits - pa.bitW - pa.bitOff))) >> (64 - pa.bitW)
	}
	f.putRaw(pa, i, x)
	switch {
	case pa.typ.symbol:
		w.WriteString(f.t.kp.Kernel().Kallsyms().Format(x))
	case pa.typ.hex:
		w.WriteString("0x")
		w.Write(strconv.AppendUint(w.AvailableBuffer(), x, 16))
	case pa.typ.signed:
		w.Write(strconv.AppendInt(w.AvailableBuffer(), int64(x<<(64-bits))>>(64-bits), 10))
	default:
		w.Write(strconv.AppendUint(w.AvailableBuffer(), x, 10))
	}
}

// writeQuoted writes s in double quotes, as "\"%s\"" prints it.
func writeQuoted[S string | []byte](w *bytes.Buffer, s S) {
	w.WriteByte('"')
	w.WriteString(string(s))
	w.WriteByte('"')
}

// argString renders an argument's definition for kprobe_events.
func argString(pa *probeArg) string { return pa.name + "=" + pa.comm }

func argsString(args []*probeArg) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(argString(a))
	}
	return b.String()
}

// fieldValue is the argument's value as a filter sees it: a scalar at its
// type's width (sign-extended for signed types), or a string.
func (f *fetcher) fieldValue(pa *probeArg) filter.Value {
	v, data, isData, ok := f.value(pa.code)
	last := pa.code[len(pa.code)-1].op
	if pa.typ.symstr {
		s, _ := f.symstr(v, ok, last == opDeref)
		return filter.Value{Str: s, IsStr: true}
	}
	if pa.typ.str {
		if isData {
			return filter.Value{Str: data, IsStr: true}
		}
		if !ok {
			return filter.Value{IsStr: true}
		}
		s, _ := f.readString(v, pa.typ.user || last == opUDeref)
		return filter.Value{Str: s, IsStr: true}
	}
	if !ok {
		return filter.Value{}
	}
	if last == opDeref || last == opUDeref {
		b := make([]byte, 8)
		if !f.readMem(v, b[:pa.typ.size], last == opUDeref) {
			return filter.Value{}
		}
		v = binary.LittleEndian.Uint64(b)
	}
	bits := pa.typ.size * 8
	if bits < 64 {
		v &= 1<<bits - 1
		if pa.typ.signed {
			v = uint64(int64(v<<(64-bits)) >> (64 - bits))
		}
	}
	if pa.bitW > 0 {
		v = (v << (64 - pa.bitW - pa.bitOff)) >> (64 - pa.bitW)
	}
	return filter.Value{Num: v}
}

// traceFlagIrqsOff is TRACE_FLAG_IRQS_OFF in common_flags: a kprobe
// handler runs with interrupts masked (the 'd' of "d....").
const traceFlagIrqsOff = 0x01

// passes reports whether a hit on cpu passes the filter of the event
// in one array.
func (f *fetcher) passes(ev *eventFile, comm string, pid, cpu int, flags uint64) bool {
	fp := ev.filter.Load()
	if fp == nil {
		return true
	}
	return (*fp).Eval(f.fields(ev.ev, comm, pid, cpu, flags))
}

// fields are the values a filter reads from a hit's record: the event's
// filters and its triggers' (trigger.go).
func (f *fetcher) fields(ev *event, comm string, pid, cpu int, flags uint64) map[string]filter.Value {
	n := 6 + len(ev.args) + len(f.args)
	if ev.static != nil {
		n += len(ev.static.fields)
	}
	return f.fieldsInto(make(map[string]filter.Value, n), ev, comm, pid, cpu, flags)
}

// fieldsInto is fields into an empty map the caller keeps: building the
// map was most of a hist trigger's cost per hit
// (BenchmarkKprobeHitHist), so the triggers reuse theirs.
func (f *fetcher) fieldsInto(fields map[string]filter.Value, ev *event, comm string, pid, cpu int, flags uint64) map[string]filter.Value {
	args := ev.args
	if f.args != nil {
		args = f.args
	}
	fields["common_pid"] = filter.Value{Num: uint64(int64(pid))}
	fields["comm"] = filter.Value{Str: comm, IsStr: true}
	fields["common_type"] = filter.Value{Num: uint64(ev.id)}
	fields["common_flags"] = filter.Value{Num: flags}
	fields["common_preempt_count"] = filter.Value{}
	fields["cpu"] = filter.Value{Num: uint64(cpu)}
	for _, a := range args {
		if a.count == 0 {
			fields[a.name] = f.fieldValue(a)
		}
	}
	if ev.static != nil && f.hit != nil {
		for _, sf := range ev.static.fields {
			if sf.ptrStr {
				// filter_pred_pchar_user: the string, user or kernel;
				// a hist takes the pointer (histEventFields).
				ptr := f.hit.rec.u64(sf.offset)
				s, _ := f.readString(ptr, true)
				fields[sf.name] = filter.Value{Num: ptr, Str: s, IsStr: true}
				continue
			}
			fields[sf.name] = f.hit.rec.value(sf)
		}
	}
	return fields
}
