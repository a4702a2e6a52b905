package tracing

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"syscall"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// uprobe events, after Linux 6.1's kernel/trace/trace_uprobe.c: the
// uprobe_events and uprobe_profile files, the "p|r[:[GRP/][EVENT]]
// PATH:OFFSET[%return][(REF_CTR_OFFSET)] [FETCHARGS]" parser with Linux's
// errnos and error_log entries, PATH resolved in the guest's file system
// (kernel.LookupPath), and the events' directories under events/.
//
// kpemu does not place uprobes in guest programs: an event can be
// defined, listed, filtered and removed as on Linux, but enabling it fails
// with EOPNOTSUPP, "Operation not supported": what kpemu cannot do, said
// plainly. (Linux's uprobe_register() stub for kernels without uprobes
// returns ENOSYS, but that means "no such system call" to tools, and
// go-fuse takes it from a write for "no Writev" and writes again.)

const uprobeGroup = "uprobes" // UPROBE_EVENT_SYSTEM

// uprobeLoc is what a trace_uprobe has that a trace_kprobe lacks.
type uprobeLoc struct {
	filename string           // PATH as written, as the files show it
	file     kernel.GuestFile // what PATH resolved to (tu->path)
	offset   uint64
	refCtr   uint64 // ref_ctr_offset; 0 for none
	// args are this probe's own arguments (tu->tp.args): a probe
	// appended to an event has its names and types but may fetch them
	// otherwise ($comm for $COMM), and is listed as written.
	args []*probeArg
	// consumer is tu->consumer: registered while the event is enabled.
	consumer kprobes.UprobeConsumer
}

// writeUprobeEvents is uprobe_events' write (probes_write).
func (t *Tracing) writeUprobeEvents(_ context.Context, p []byte, _ int64) (int, error) {
	return t.parseRunCommand(p, "uprobe_events", func(line string) error {
		return t.runDynCommand(line, dynUprobe, t.createUprobe, "uprobe")
	})
}

// createUprobe is __trace_uprobe_create: errCanceled when argv is not a
// uprobe definition at all (no error_log entry then).
func (t *Tracing) createUprobe(argv []string) error {
	isReturn := false
	switch argv[0][0] {
	case 'r':
		isReturn = true
	case 'p':
	default:
		return errCanceled
	}
	if len(argv) < 2 {
		return errCanceled
	}
	// Only "p:" and "r:" name the event: "p1" or "rx" is a nameless p or r.
	var eventSpec *string
	if len(argv[0]) > 1 && argv[0][1] == ':' {
		s := argv[0][2:]
		eventSpec = &s
	}
	if !strings.Contains(argv[1], "/") {
		return errCanceled
	}
	// The last ':', in case PATH has one too.
	colon := strings.LastIndexByte(argv[1], ':')
	if colon < 0 || colon+1 == len(argv[1]) || !isDigit(argv[1][colon+1]) {
		return errCanceled
	}
	pl := &probeLog{sys: "trace_uprobe", argv: argv, index: 1}
	err := t.createUprobeLogged(argv, colon, eventSpec, isReturn, pl)
	if pl.err != nil {
		pl.err.ts = t.now()
		t.top.errlog.add(*pl.err)
	}
	return err
}

// createUprobeLogged parses argv (argv[1] split at colon) with pl at
// argv[1], and registers the event.
func (t *Tracing) createUprobeLogged(argv []string, colon int, eventSpec *string, isReturn bool, pl *probeLog) error {
	filename, arg := argv[1][:colon], argv[1][colon+1:]
	argAt := colon + 1 // where arg starts in argv[1], for the carets
	file, err := t.kp.Kernel().LookupPath(filename)
	if err != nil {
		pl.logErr(0, errFileNotFound)
		return fmt.Errorf("uprobe file %s: %w", filename, err)
	}
	if !file.IsRegular() {
		return parseError(pl, 0, errNoRegularFile)
	}

	// The reference counter's "(...)" ends the offset, after %return.
	var refCtr uint64
	if open := strings.IndexByte(arg, '('); open >= 0 {
		end := strings.IndexByte(arg[open:], ')')
		switch {
		case end < 0:
			return parseError(pl, argAt+len(arg), errRefcntOpenBrace)
		case open+end+1 != len(arg):
			return parseError(pl, argAt+open+end+1, errBadRefcntSuffix)
		}
		v, err := kstr.Strtoull(arg[open+1:open+end], 0)
		if err != nil {
			pl.logErr(argAt+open+1, errBadRefcnt)
			return fmt.Errorf("%w: %s", err, errBadRefcnt)
		}
		refCtr, arg = v, arg[:open]
	}
	if i := strings.IndexByte(arg, '%'); i >= 0 {
		if arg[i:] != "%return" {
			return parseError(pl, argAt+i, errBadAddrSuffix)
		}
		isReturn, arg = true, arg[:i]
	}
	offset, err := kstr.Strtoull(arg, 0)
	if err != nil {
		pl.logErr(argAt, errBadUprobeOffs)
		return fmt.Errorf("%w: %s", err, errBadUprobeOffs)
	}

	pl.index = 0
	group, name := uprobeGroup, ""
	if eventSpec != nil {
		g, n, err := parseEventName(*eventSpec, len("p:"), pl)
		if err != nil {
			return err
		}
		if g != "" {
			group = g
		}
		name = n
	}
	if name == "" {
		name = uprobeAutoName(filename, offset)
	}

	ev := &event{group: group, name: name, isReturn: isReturn, isUprobe: true}
	ctx := argContext{isReturn: isReturn, user: true}
	for i, a := range argv[2:] {
		if i >= maxTraceArgs {
			break
		}
		pl.index = i + 2
		pa, err := parseProbeArg(a, i, ev.args, ctx, t.kp.Kernel().Kallsyms(), pl)
		if err != nil {
			return err
		}
		ev.args = append(ev.args, pa)
	}
	tp := &traceProbe{ev: ev, up: &uprobeLoc{filename: filename, file: file, offset: offset, refCtr: refCtr, args: ev.args}}
	t.setUprobeConsumer(tp)

	t.mu.Lock()
	defer t.mu.Unlock()
	return t.registerUprobe(tp, pl)
}

// uprobeAutoName is the name of an event written without one: "p_", the
// file's base name up to its first '.', '-' or '_', "_0x" and the offset
// in hex; 'p' for return probes too, and nothing sanitized, as Linux has
// it. Like snprintf into MAX_EVENT_NAME_LEN bytes, it keeps 63.
func uprobeAutoName(filename string, offset uint64) string {
	tail := filename[strings.LastIndexByte(filename, '/')+1:] // kbasename
	if i := strings.IndexAny(tail, ".-_"); i >= 0 {
		tail = tail[:i]
	}
	name := fmt.Sprintf("p_%s_0x%x", tail, offset)
	if len(name) > maxEventNameLen-1 {
		name = name[:maxEventNameLen-1]
	}
	return name
}

// registerUprobe is register_trace_uprobe; t.mu is held.
func (t *Tracing) registerUprobe(tp *traceProbe, pl *probeLog) error {
	ev, up := tp.ev, tp.up
	// validate_ref_ctr_offset: one reference counter per probed place.
	for _, o := range t.probes {
		if o.up != nil && o.up.file.Inode == up.file.Inode && o.up.offset == up.offset && o.up.refCtr != up.refCtr {
			t.log.Warn("trace_uprobe: Reference counter offset mismatch.")
			return fmt.Errorf("%w: %s:%#x has another reference counter", syscall.EINVAL, up.filename, up.offset)
		}
	}
	if old := t.events[ev.key()]; old != nil {
		pl.index = 0
		switch {
		case !old.isUprobe: // another kind of event has the name
			pl.logErr(0, errEventExist)
			return fmt.Errorf("%w: %s is another event", syscall.EEXIST, ev.key())
		case old.isReturn != ev.isReturn:
			pl.logErr(0, errDiffProbeType)
			return fmt.Errorf("%w: %s has another probe type", syscall.EEXIST, ev.key())
		}
		return t.appendUprobe(tp, old, pl)
	}
	if err := t.createEventFiles(ev); err != nil {
		return err
	}
	ev.id = t.nextID
	t.nextID++
	t.addEvent(ev)
	ev.probes = append(ev.probes, tp)
	t.probes = append(t.probes, tp)
	return nil
}

// appendUprobe is append_trace_uprobe: another place for an existing
// event, if its arguments' names and types match and it is not the same
// file, offset and argument expressions; t.mu is held.
func (t *Tracing) appendUprobe(tp *traceProbe, to *event, pl *probeLog) error {
	if i := compareArgs(tp.ev.args, to.args); i != 0 {
		pl.index = i + 1
		pl.logErr(0, errDiffArgType)
		return fmt.Errorf("%w: arguments differ from %s", syscall.EEXIST, to.key())
	}
	for _, o := range to.probes {
		if o.up.file.Inode == tp.up.file.Inode && o.up.offset == tp.up.offset && sameArgComms(o.up.args, tp.up.args) {
			pl.index = 0
			pl.logErr(0, errSameProbe)
			return fmt.Errorf("%w: the same probe exists in %s", syscall.EEXIST, to.key())
		}
	}
	tp.ev = to
	to.probes = append(to.probes, tp)
	t.probes = append(t.probes, tp)
	return nil
}

// sameArgComms: the argument expressions are the same, as written
// (compareArgs has matched their number, names and types).
func sameArgComms(a, b []*probeArg) bool {
	for i := range a {
		if a[i].comm != b[i].comm {
			return false
		}
	}
	return true
}

// place is PATH:0xOFFSET[(0xREF)] as trace_uprobe_show prints it: the
// offset in 16 hex digits (sizeof(void *) * 2).
func (up *uprobeLoc) place() string {
	s := fmt.Sprintf("%s:0x%016x", up.filename, up.offset)
	if up.refCtr != 0 {
		s += fmt.Sprintf("(0x%x)", up.refCtr)
	}
	return s
}

// showUprobe is trace_uprobe_show: one line of uprobe_events.
func (tp *traceProbe) showUprobe(w *bytes.Buffer) {
	kind := byte('p')
	if tp.ev.isReturn {
		kind = 'r'
	}
	fmt.Fprintf(w, "%c:%s/%s %s%s\n", kind, tp.ev.group, tp.ev.name, tp.up.place(), argsString(tp.up.args))
}

// matchUprobeHead is trace_uprobe_match_command_head: a removal's
// definition must start as uprobe_events shows the probe.
func (tp *traceProbe) matchUprobeHead(argv []string) bool {
	if len(argv) == 0 {
		return true
	}
	if argv[0] != tp.up.place() {
		return false
	}
	return matchArgs(tp.up.args, argv[1:])
}

// matchArgs is trace_probe_match_command_args: argv is a prefix of the
// probe's NAME=EXPR arguments.
func matchArgs(args []*probeArg, argv []string) bool {
	if len(args) < len(argv) {
		return false
	}
	for i, a := range argv {
		if a != argString(args[i]) {
			return false
		}
	}
	return true
}

// showUprobeProfile is uprobe_profile (probes_profile_seq_show): the
// file, the event and its hits, which stay 0 here.
func (t *Tracing) showUprobeProfile(_ context.Context, w *bytes.Buffer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range t.probes {
		if tp.up != nil {
			fmt.Fprintf(w, "  %s %-44s %15d\n", tp.up.filename, tp.ev.name, tp.nhit.Load())
		}
	}
	return nil
}

// setUprobeConsumer is alloc_trace_uprobe's consumer: uprobe_dispatcher
// for every probe (it counts the hit, and records unless the probe is a
// return probe), uretprobe_dispatcher for return probes.
func (t *Tracing) setUprobeConsumer(tp *traceProbe) {
	c := &tp.up.consumer
	c.Handler = func(_ *kprobes.UprobeConsumer, regs *kprobes.Regs) {
		tp.nhit.Add(1)
		if tp.ev.isReturn {
			return
		}
		t.uprobeDispatch(tp, regs, regs.PC)
	}
	if tp.ev.isReturn {
		c.RetHandler = func(_ *kprobes.UprobeConsumer, fn uint64, regs *kprobes.Regs) {
			t.uprobeDispatch(tp, regs, fn)
		}
	}
}

// uprobeDispatch runs __uprobe_trace_func for each array whose file of the
// armed event is enabled: the triggers, the record, the triggers that
// wait for it. bp is the probed address (the function, for a return).
func (t *Tracing) uprobeDispatch(tp *traceProbe, regs *kprobes.Regs, bp uint64) {
	ev := tp.ev
	if !ev.armed.Load() {
		return
	}
	uh := &uprobeHit{base: bp - tp.up.offset}
	one := func(f *eventFile) {
		post, rec := t.callTriggersHit(f, regs, 0, nil, tp.up.args, uh)
		if rec {
			t.recordUprobe(f, tp, regs, bp, uh)
		}
		t.postTriggers(f, post, regs, 0)
	}
	if f := &ev.top; f.enabled.Load() {
		one(f)
	}
	if inst := ev.inst.Load(); inst != nil {
		for _, f := range *inst {
			if f.enabled.Load() {
				one(f)
			}
		}
	}
}

// armUprobes is probe_event_enable and probe_event_disable for a uprobe
// event's probes: uprobe_register of each consumer, all or none; t.mu is
// held.
func (t *Tracing) armUprobes(ev *event, on bool) error {
	if !on {
		var first error
		for _, tp := range ev.probes {
			if err := t.kp.UnregisterUprobe(tp.up.file, tp.up.offset, &tp.up.consumer); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	for i, tp := range ev.probes {
		if err := t.kp.RegisterUprobe(tp.up.file, tp.up.offset, &tp.up.consumer); err != nil {
			for _, done := range ev.probes[:i] {
				_ = t.kp.UnregisterUprobe(done.up.file, done.up.offset, &done.up.consumer)
			}
			return err
		}
	}
	return nil
}
