package tracing

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// The kprobe events, after Linux 6.1's kernel/trace/trace_kprobe.c: a
// line of kprobe_events parsed into an event of one or more probes, the
// probes registered with kprobes (disarmed until the event is enabled),
// their hits dispatched to the event's triggers and record, and the
// events released. The argument language is args.go's and fetch.go's,
// the kpemu j: events jevent.go's, the uprobe events uprobe.go's.

// Limits from Linux's trace_probe.h and trace.h.
const (
	maxEventNameLen    = 64   // MAX_EVENT_NAME_LEN
	maxTraceArgs       = 128  // MAX_TRACE_ARGS
	writeBufSize       = 4096 // WRITE_BUFSIZE
	kretprobeMaxActMax = 4096 // KRETPROBE_MAXACTIVE_MAX
	defaultGroup       = "kprobes"
)

// errCanceled is -ECANCELED: "not a kprobe command", EINVAL to the writer.
var errCanceled = errors.New("not a kprobe event command")

// traceProbe is a trace_kprobe: one probe location of an event.
type traceProbe struct {
	ev         *event
	symbol     string // as written, without the offset; "" for an address probe
	offset     uint64
	addr       uint64 // address probes
	maxactive  int
	rp         kprobes.Kretprobe // rp.Kp is the kprobe of p events too
	jp         kprobes.Jprobe    // j events
	up         *uprobeLoc        // uprobe events' place (uprobe.go); nil for the others
	registered bool
	nhit       atomic.Uint64
	// args are this probe's own arguments (tk->tp.args), as its line
	// defined them: an appended probe's have the event's names and
	// types, but may fetch otherwise (x=@vfs_write beside x=@vfs_read).
	// They are what it records, shows in kprobe_events and resolves
	// @SYMs of. nil for a j: event.
	args []*probeArg
}

// location is how kprobe_events shows the probe point.
func (tp *traceProbe) location(t *Tracing) string {
	switch {
	case tp.symbol == "":
		return fmt.Sprintf("0x%016x", hashPointer(tp.addr))
	case tp.offset != 0:
		return fmt.Sprintf("%s+%d", tp.symbol, tp.offset)
	default:
		return tp.symbol
	}
}

// hashPointer stands in for %p's hashing: addresses in kprobe_events are
// never shown raw. Linux keys siphash with a random boot key; kpemu uses a
// fixed key so that runs are deterministic.
func hashPointer(addr uint64) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < 8; i++ {
		h ^= (addr >> (8 * i)) & 0xff
		h *= 1099511628211
	}
	return (h ^ h>>32) & 0xffffffff
}

// runDynCommand is create_or_delete_trace_kprobe and
// create_or_delete_trace_uprobe for one line: "-" removes events of kind,
// anything else goes to create (t.create, t.createUprobe), whose
// errCanceled ("not a definition of mine") is EINVAL here.
func (t *Tracing) runDynCommand(line string, kind dynKind, create func([]string) error, what string) error {
	if strings.HasPrefix(line, "-") {
		return t.release(line, kind)
	}
	argv := strings.Fields(line)
	if len(argv) == 0 {
		return nil
	}
	err := create(argv)
	if errors.Is(err, errCanceled) {
		return fmt.Errorf("%w: %q is not a %s event command", syscall.EINVAL, line, what)
	}
	return err
}

// create is __trace_kprobe_create.
func (t *Tracing) create(argv []string) error {
	var isReturn bool
	switch argv[0][0] {
	case 'r':
		isReturn = true
	case 'p', 'j':
	default:
		return errCanceled
	}
	if len(argv) < 2 {
		return errCanceled
	}
	pl := &probeLog{argv: argv}
	var err error
	if argv[0][0] == 'j' {
		err = t.createJprobeEvent(argv, pl)
	} else {
		err = t.createLogged(argv, isReturn, pl)
	}
	if pl.err != nil {
		pl.err.ts = t.now()
		t.top.errlog.add(*pl.err)
	}
	return err
}

func parseError(pl *probeLog, offset int, code errCode) error {
	pl.logErr(offset, code)
	return fmt.Errorf("%w: %s", syscall.EINVAL, code)
}

func (t *Tracing) createLogged(argv []string, isReturn bool, pl *probeLog) error {
	head := argv[0]
	var eventSpec *string
	if i := strings.IndexByte(head[1:], ':'); i >= 0 {
		s := head[1+i+1:]
		eventSpec = &s
	}
	maxactive := 0
	if len(head) > 1 && isDigit(head[1]) {
		if !isReturn {
			return parseError(pl, 1, errMaxactNoKprobe)
		}
		digits := head[1:]
		if eventSpec != nil {
			digits = head[1 : len(head)-len(*eventSpec)-1]
		}
		if len(digits) > maxEventNameLen-1 {
			return parseError(pl, 1, errBadMaxact)
		}
		v, err := strconv.ParseUint(digits, 0, 32)
		if err != nil || v == 0 {
			return parseError(pl, 1, errBadMaxact)
		}
		if v > kretprobeMaxActMax {
			return parseError(pl, 1, errMaxactTooBig)
		}
		maxactive = int(v)
	}

	tp := &traceProbe{maxactive: maxactive}
	fentry := false // TPARG_FL_FENTRY: $argN may be fetched
	if addr, err := strconv.ParseUint(argv[1], 0, 64); err == nil {
		tp.addr = addr
	} else {
		pl.index = 1
		sym := argv[1]
		if strings.Contains(sym, "/") && strings.Contains(sym, ":") {
			return errCanceled // a uprobe definition
		}
		if i := strings.IndexByte(sym, '%'); i >= 0 {
			if sym[i:] != "%return" {
				return parseError(pl, i, errBadAddrSuffix)
			}
			sym = sym[:i]
			isReturn = true
		}
		off := int64(0)
		if i := strings.IndexAny(sym, "+-"); i >= 0 {
			v, err := strconv.ParseInt(sym[i:], 0, 64)
			if err != nil || v < 0 || v > 0xffffffff {
				return parseError(pl, 0, errBadProbeAddr)
			}
			off = v
			sym = sym[:i]
		}
		if n := len(t.kp.Kernel().Kallsyms().Lookup(sym)); n > 1 {
			pl.logErr(0, errNonUniqSymbol)
			return fmt.Errorf("%w: symbol %s is not unique", syscall.EADDRNOTAVAIL, sym)
		}
		// kprobe_on_func_entry: an unknown symbol waits for register's
		// ENOENT; an offset that is not a function's first instruction
		// is no place for a return probe.
		entry, err := t.kp.OnFuncEntry(sym, 0, uint64(off))
		if err == nil && !entry && isReturn {
			return parseError(pl, 0, errBadRetprobe)
		}
		fentry = err == nil && entry
		tp.symbol, tp.offset = sym, uint64(off)
	}

	pl.index = 0
	group, name := defaultGroup, ""
	if eventSpec != nil {
		g, n, err := parseEventName(*eventSpec, len(head)-len(*eventSpec), pl)
		if err != nil {
			return err
		}
		if g != "" {
			group = g
		}
		name = n
	}
	if name == "" {
		kind := byte('p')
		if isReturn {
			kind = 'r'
		}
		if tp.symbol != "" {
			name = fmt.Sprintf("%c_%s_%d", kind, tp.symbol, tp.offset)
		} else {
			name = fmt.Sprintf("%c_0x%016x", kind, hashPointer(tp.addr))
		}
		name = sanitizeEventName(name)
		if len(name) > maxEventNameLen-1 {
			name = name[:maxEventNameLen-1]
		}
	}

	ev := &event{group: group, name: name, isReturn: isReturn}
	ctx := argContext{isReturn: isReturn, atFuncEntry: fentry}
	for i, a := range argv[2:] {
		if i >= maxTraceArgs {
			break
		}
		pl.index = i + 2
		arg, err := parseProbeArg(a, i, ev.args, ctx, t.kp.Kernel().Kallsyms(), pl)
		if err != nil {
			return err
		}
		ev.args = append(ev.args, arg)
	}
	tp.ev, tp.args = ev, ev.args

	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.register(tp, pl)
	if err != nil {
		pl.index = 1
		switch {
		case pl.err != nil:
		case errors.Is(err, syscall.EILSEQ):
			pl.logErr(0, errBadInsnBndry)
		case errors.Is(err, syscall.ENOENT):
			pl.logErr(0, errBadProbeAddr)
		case !errors.Is(err, syscall.ENOMEM) && !errors.Is(err, syscall.EEXIST):
			pl.logErr(0, errFailRegProbe)
		}
	}
	return err
}

// parseEventName is traceprobe_parse_event_name; offset is where spec
// starts in argv[0], for the caret.
func parseEventName(spec string, offset int, pl *probeLog) (group, name string, err error) {
	event := spec
	slash := strings.IndexByte(event, '/')
	if slash < 0 {
		slash = strings.IndexByte(event, '.')
	}
	if slash >= 0 {
		if slash == 0 {
			return "", "", parseError(pl, offset, errNoGroupName)
		}
		if slash+1 > maxEventNameLen {
			return "", "", parseError(pl, offset, errGroupTooLong)
		}
		group = event[:slash]
		if !isGoodName(group) {
			return "", "", parseError(pl, offset, errBadGroupName)
		}
		offset += slash + 1
		event = event[slash+1:]
	}
	switch {
	case event == "":
		if slash >= 0 {
			return group, "", nil
		}
		return "", "", parseError(pl, offset, errNoEventName)
	case len(event) >= maxEventNameLen: // 63 characters at most
		return "", "", parseError(pl, offset, errEventTooLong)
	case !isGoodName(event):
		return "", "", parseError(pl, offset, errBadEventName)
	}
	return group, event, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// isGoodName is is_good_name: a C identifier.
func isGoodName(s string) bool {
	if s == "" || !(isAlpha(s[0]) || s[0] == '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !(isAlpha(s[i]) || isDigit(s[i]) || s[i] == '_') {
			return false
		}
	}
	return true
}

// sanitizeEventName replaces what a C identifier cannot hold with '_',
// and a leading digit too.
func sanitizeEventName(s string) string {
	b := []byte(s)
	if len(b) > 0 && isDigit(b[0]) {
		b[0] = '_'
	}
	for i, c := range b {
		if !(isAlpha(c) || isDigit(c) || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// register is register_trace_kprobe; t.mu is held.
func (t *Tracing) register(tp *traceProbe, pl *probeLog) error {
	ev := tp.ev
	if old := t.events[ev.key()]; old != nil {
		if old.isUprobe || old.static != nil || old.synth != nil || old.eprobe != nil { // register_kprobe_event's EEXIST
			pl.index = 0
			pl.logErr(0, errEventExist)
			return fmt.Errorf("%w: %s is another event", syscall.EEXIST, ev.key())
		}
		if old.isReturn != ev.isReturn {
			pl.index = 0
			pl.logErr(0, errDiffProbeType)
			return fmt.Errorf("%w: %s has another probe type", syscall.EEXIST, ev.key())
		}
		return t.appendProbe(tp, old, pl)
	}
	if err := t.createEventFiles(ev); err != nil {
		return err
	}
	ev.id = t.nextID
	t.nextID++
	err := t.registerProbe(tp)
	if err != nil {
		t.removeEventFiles(ev)
		return err
	}
	t.addEvent(ev)
	ev.probes = append(ev.probes, tp)
	t.probes = append(t.probes, tp)
	return nil
}

// appendProbe is append_trace_kprobe: another location for an existing
// event, if its arguments match.
func (t *Tracing) appendProbe(tp *traceProbe, to *event, pl *probeLog) error {
	if i := compareArgs(tp.ev.args, to.args); i != 0 {
		pl.index = i + 1
		pl.logErr(0, errDiffArgType)
		return fmt.Errorf("%w: arguments differ from %s", syscall.EEXIST, to.key())
	}
	for _, o := range to.probes {
		if o.symbol == tp.symbol && o.offset == tp.offset && o.addr == tp.addr {
			pl.index = 0
			pl.logErr(0, errSameProbe)
			return fmt.Errorf("%w: the same probe exists in %s", syscall.EEXIST, to.key())
		}
	}
	tp.ev = to
	if err := t.registerProbe(tp); err != nil {
		return err
	}
	to.probes = append(to.probes, tp)
	t.probes = append(t.probes, tp)
	return nil
}

// compareArgs is trace_probe_compare_arg_type: 0 when equal, else the
// 1-based index of the first difference.
func compareArgs(a, b []*probeArg) int {
	if len(a) < len(b) {
		return len(a) + 1
	}
	if len(a) > len(b) {
		return len(b) + 1
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].typ.name != b[i].typ.name || a[i].count != b[i].count {
			return i + 1
		}
	}
	return 0
}

// registerProbe is __register_trace_kprobe: register the kprobe disabled
// unless the event is enabled. A probe on a module that is not loaded
// stays unregistered, as Linux keeps it for when the module comes.
func (t *Tracing) registerProbe(tp *traceProbe) error {
	if t.withinNotraceFunc(tp) {
		sym := tp.symbol
		if sym == "" {
			sym = "unknown"
		}
		t.log.Warn("trace_kprobe: Could not probe notrace function " + sym)
		return fmt.Errorf("%w: %s is a notrace function", syscall.EINVAL, sym)
	}
	if err := t.updateArgs(tp.args); err != nil {
		if errors.Is(err, syscall.ENOENT) && !t.moduleExists(tp) {
			t.log.Warn("trace_kprobe: This probe might be able to register after target module is loaded. Continue.")
			return nil
		}
		return err
	}
	tp.rp = kprobes.Kretprobe{}
	kp := &tp.rp.Kp
	kp.Offset, kp.Disabled = tp.offset, !tp.ev.armed.Load()
	if tp.symbol != "" {
		kp.Symbol = tp.symbol
	} else {
		kp.Addr = tp.addr
	}
	var err error
	switch {
	case tp.ev.isJprobe:
		tp.jp = kprobes.Jprobe{Handler: t.jprobeDispatcher(tp)}
		tp.jp.Kp.Symbol, tp.jp.Kp.Disabled = tp.symbol, kp.Disabled
		err = t.kp.RegisterJprobe(&tp.jp)
	case tp.ev.isReturn:
		tp.rp.MaxActive, tp.rp.Handler = tp.maxactive, t.retDispatcher(tp)
		err = t.kp.RegisterKretprobe(&tp.rp)
		tp.maxactive = tp.rp.MaxActive
	default:
		kp.PreHandler = t.dispatcher(tp)
		err = t.kp.Register(kp)
	}
	if errors.Is(err, syscall.ENOENT) && !t.moduleExists(tp) {
		t.log.Warn("trace_kprobe: This probe might be able to register after target module is loaded. Continue.")
		return nil
	}
	if err != nil {
		return err
	}
	tp.registered = true
	return nil
}

// updateArgs is traceprobe_update_arg for each of args: a @SYM[+-OFF]
// fetch gets SYM's address plus OFF, looked up now, as Linux's
// __register_trace_kprobe does after its notrace check and before
// register_kprobe: a symbol kallsyms does not have is ENOENT ("Invalid
// probed address or symbol", under the probed place), an offset kstrtol
// refuses its errno (EINVAL: "Failed to register probe event"). An
// immediate is only written when it changes: the probes may be hitting.
func (t *Tracing) updateArgs(args []*probeArg) error {
	syms := t.kp.Kernel().Kallsyms()
	for _, pa := range args {
		for i, in := range pa.code {
			if in.op != opNop || in.data == "" {
				continue
			}
			if i+1 >= len(pa.code) || pa.code[i+1].op != opImm {
				return fmt.Errorf("%w: @%s has no immediate", syscall.EINVAL, in.data)
			}
			name, off := in.data, int64(0)
			if j := strings.IndexAny(name, "+-"); j >= 0 { // traceprobe_split_symbol_offset
				v, err := kstr.Strtoll(name[j:], 0)
				if err != nil {
					return fmt.Errorf("%w: bad offset in @%s", err, in.data)
				}
				name, off = name[:j], v
			}
			s, ok := syms.LookupName(name)
			if !ok {
				return fmt.Errorf("%w: no symbol %s", syscall.ENOENT, name)
			}
			if a := uint64(int64(s.Addr) + off); pa.code[i+1].imm != a {
				pa.code[i+1].imm = a
			}
		}
	}
	return nil
}

// withinNotraceFunc is within_notrace_func (Linux without
// CONFIG_KPROBE_EVENTS_ON_NOTRACE): the probe's function has no ftrace
// call site, so kprobe events may not probe it. A suffixed local symbol
// (foo.isra.0) is judged by foo when foo exists. An address in no symbol
// is not refused here.
func (t *Tracing) withinNotraceFunc(tp *traceProbe) bool {
	k := t.kp.Kernel()
	syms := k.Kallsyms()
	addr := tp.addr
	if tp.symbol != "" {
		s, ok := syms.LookupName(tp.symbol)
		if !ok {
			return false
		}
		addr = s.Addr + tp.offset
	}
	notrace := func(addr uint64) bool {
		s, off, ok := syms.LookupAddr(addr)
		if !ok {
			return false
		}
		start := addr - off
		return k.FtraceLocationRange(start, start+max(s.Size, 1)-1) == 0
	}
	if !notrace(addr) {
		return false
	}
	s, _, _ := syms.LookupAddr(addr)
	base, _, suffixed := strings.Cut(s.Name, ".")
	if !suffixed {
		return true
	}
	if b, ok := syms.LookupModuleName(s.Module, base); ok {
		return notrace(b.Addr)
	}
	return true
}

// moduleExists is trace_kprobe_module_exist: address probes are kept for a
// module to come; symbol probes without MOD: are not; MOD:SYM probes are
// kept while MOD is not loaded (or going away).
func (t *Tracing) moduleExists(tp *traceProbe) bool {
	if tp.symbol == "" {
		return false
	}
	mod, _, ok := strings.Cut(tp.symbol, ":")
	if !ok {
		return true
	}
	_, st, loaded := t.kp.Kernel().Module(mod)
	return loaded && st != kernel.ModuleGoing
}

// withinModule is trace_kprobe_within_module: a MOD:SYM probe on mod.
func (tp *traceProbe) withinModule(mod string) bool {
	m, _, ok := strings.Cut(tp.symbol, ":")
	return ok && m == mod
}

// moduleCallback is trace_kprobe_module_callback: when a module comes,
// its MOD:SYM probes are registered again, the kprobe left [GONE] by an
// earlier unload (or never registered) replaced by a live one, before the
// module's init runs, so that a probe on init code fires during init.
func (t *Tracing) moduleCallback(ev kernel.ModuleEvent) {
	if ev.State != kernel.ModuleComing {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range t.probes {
		if !tp.withinModule(ev.Module.Name) {
			continue
		}
		t.unregisterKprobe(tp)
		if err := t.registerProbe(tp); err != nil {
			var en syscall.Errno
			code := -int(syscall.EINVAL)
			if errors.As(err, &en) {
				code = -int(en)
			}
			t.log.Warn(fmt.Sprintf("trace_kprobe: Failed to re-register probe %s on %s: %d", tp.ev.name, ev.Module.Name, code))
		}
	}
}

// dispatcher is kprobe_dispatcher: count the hit and, for an armed event,
// run __kprobe_trace_func for each array whose file of the event is
// enabled: the triggers (trigger.go), the record unless the event is
// soft-disabled there, then the triggers that wait for the record.
func (t *Tracing) dispatcher(tp *traceProbe) func(*kprobes.Kprobe, *kprobes.Regs) bool {
	return func(_ *kprobes.Kprobe, regs *kprobes.Regs) bool {
		tp.nhit.Add(1)
		ev := tp.ev
		if !ev.armed.Load() {
			return false
		}
		if ev.perf.Load() != nil {
			t.perfHit(ev, &fetcher{t: t, regs: regs, args: tp.args}, traceFlagIrqsOff, func() []byte { return t.probeRaw(tp, regs, regs.PC) })
		}
		if f := &ev.top; f.enabled.Load() {
			t.kprobeTraceFunc(f, tp, regs)
		}
		if inst := ev.inst.Load(); inst != nil {
			for _, f := range *inst {
				if f.enabled.Load() {
					t.kprobeTraceFunc(f, tp, regs)
				}
			}
		}
		return false
	}
}

// kprobeTraceFunc is __kprobe_trace_func: one array's triggers and
// record of a hit.
func (t *Tracing) kprobeTraceFunc(f *eventFile, tp *traceProbe, regs *kprobes.Regs) {
	post, rec := t.callTriggersProbe(f, tp, regs, traceFlagIrqsOff)
	if rec {
		t.record(f, tp, regs)
	}
	t.postTriggers(f, post, regs, traceFlagIrqsOff)
}

// retDispatcher is kretprobe_dispatcher: count the return and handle it as
// dispatcher does.
func (t *Tracing) retDispatcher(tp *traceProbe) func(*kprobes.KretprobeInstance, *kprobes.Regs) {
	return func(ri *kprobes.KretprobeInstance, regs *kprobes.Regs) {
		tp.nhit.Add(1)
		ev := tp.ev
		if !ev.armed.Load() {
			return
		}
		if ev.perf.Load() != nil {
			t.perfHit(ev, &fetcher{t: t, regs: regs, args: tp.args}, 0, func() []byte { return t.probeRaw(tp, regs, tp.kprobe().Addr, ri.RetAddr) })
		}
		if f := &ev.top; f.enabled.Load() {
			t.kretprobeTraceFunc(f, tp, ri, regs)
		}
		if inst := ev.inst.Load(); inst != nil {
			for _, f := range *inst {
				if f.enabled.Load() {
					t.kretprobeTraceFunc(f, tp, ri, regs)
				}
			}
		}
	}
}

// kretprobeTraceFunc is __kretprobe_trace_func for one array.
func (t *Tracing) kretprobeTraceFunc(f *eventFile, tp *traceProbe, ri *kprobes.KretprobeInstance, regs *kprobes.Regs) {
	post, rec := t.callTriggersProbe(f, tp, regs, 0)
	if rec {
		t.recordReturn(f, tp, ri, regs)
	}
	t.postTriggers(f, post, regs, 0)
}

// kprobe is the kprobe behind the trace probe.
func (tp *traceProbe) kprobe() *kprobes.Kprobe {
	if tp.ev.isJprobe {
		return &tp.jp.Kp
	}
	return &tp.rp.Kp
}

// missed is what kprobe_profile shows: the kprobe's nmissed, plus the
// kretprobe's for return probes.
func (tp *traceProbe) missed() uint64 {
	return tp.kprobe().Missed() + tp.rp.Missed()
}

// release is dyn_event_release for "-:[GRP/]EVENT [LOC [ARGS]]" (and
// dynamic_events' "!...:[GRP/]EVENT"), on the events of kind.
func (t *Tracing) release(line string, kind dynKind) error {
	argv := strings.Fields(line)
	var name string
	switch {
	case len(argv) == 0:
		return fmt.Errorf("%w: bad removal %q", syscall.EINVAL, line)
	case argv[0][0] == '-':
		if len(argv[0]) < 2 || argv[0][1] != ':' {
			return fmt.Errorf("%w: bad removal %q", syscall.EINVAL, line)
		}
		name = argv[0][2:]
	default:
		i := strings.IndexByte(argv[0], ':')
		if i < 0 {
			return fmt.Errorf("%w: bad removal %q", syscall.EINVAL, line)
		}
		name = argv[0][i+1:]
	}
	group, hasGroup := "", false
	if i := strings.IndexByte(name, '/'); i >= 0 {
		group, name, hasGroup = name[:i], name[i+1:], true
	}
	if !hasGroup && name == "" {
		return fmt.Errorf("%w: no event named", syscall.EINVAL)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	err := fmt.Errorf("%w: no event matches %q", syscall.ENOENT, line)
	gone := map[*traceProbe]bool{}
	defer t.dropProbes(gone)
	for _, tp := range t.probes {
		ev := tp.ev
		if !kind.has(tp) || name != "" && ev.name != name || hasGroup && ev.group != group || !tp.matchHead(t, argv[1:]) {
			continue
		}
		if err = t.unregisterProbe(tp); err != nil {
			break
		}
		gone[tp] = true
	}
	return err
}

// matchHead is trace_kprobe_match_command_head: removal with a definition
// matches its prefix.
func (tp *traceProbe) matchHead(t *Tracing, argv []string) bool {
	if tp.up != nil {
		return tp.matchUprobeHead(argv)
	}
	if tp.ev.eprobe != nil {
		return matchEprobe(tp.ev, argv)
	}
	if len(argv) == 0 || tp.ev.synth != nil { // synth_event_match takes any arguments
		return true
	}
	return argv[0] == tp.location(t) && matchArgs(tp.args, argv[1:])
}

// unregisterKprobe is __unregister_trace_kprobe: the kprobe goes, the
// event stays; t.mu is held.
func (t *Tracing) unregisterKprobe(tp *traceProbe) {
	if !tp.registered {
		return
	}
	switch {
	case tp.ev.isJprobe:
		t.kp.UnregisterJprobe(&tp.jp)
	case tp.ev.isReturn:
		t.kp.UnregisterKretprobe(&tp.rp)
	default:
		t.kp.Unregister(&tp.rp.Kp)
	}
	tp.registered = false
}

// unregisterProbe is unregister_trace_kprobe, but for taking tp out of
// t.probes, which the caller does with dropProbes; t.mu is held.
func (t *Tracing) unregisterProbe(tp *traceProbe) error {
	ev := tp.ev
	if len(ev.probes) == 1 {
		if ev.armed.Load() {
			return fmt.Errorf("%w: event %s is enabled", syscall.EBUSY, ev.key())
		}
		if ev.synth != nil && t.eprobeAttached(ev) { // trace_event_dyn_busy
			return fmt.Errorf("%w: an event probe is attached to %s", syscall.EBUSY, ev.key())
		}
		if ev.eprobe != nil {
			t.removeEprobeTriggers(ev)
		}
		t.removeEventFiles(ev)
		t.dropEvent(ev)
	}
	t.unregisterKprobe(tp)
	for i, p := range ev.probes {
		if p == tp {
			ev.probes = append(ev.probes[:i:i], ev.probes[i+1:]...)
		}
	}
	return nil
}

// dropProbes takes the probes in gone out of t.probes, in one pass for a
// whole command: one at a time, removing every event would be quadratic.
// t.mu is held.
func (t *Tracing) dropProbes(gone map[*traceProbe]bool) {
	if len(gone) > 0 {
		t.probes = slices.DeleteFunc(t.probes, func(tp *traceProbe) bool { return gone[tp] })
	}
}

// releaseAll is dyn_events_release_all: EBUSY if any event of kind is
// busy, otherwise every event of kind goes, in order, up to the first
// that cannot. A synthetic event is busy only while a hist trigger uses
// it (never, in kpemu): an enabled one stops the removal there, after
// the ones before it went.
func (t *Tracing) releaseAll(kind dynKind) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range t.probes {
		if kind.has(tp) && tp.ev.synth == nil && tp.ev.armed.Load() {
			return fmt.Errorf("%w: event %s is enabled", syscall.EBUSY, tp.ev.key())
		}
	}
	gone := map[*traceProbe]bool{}
	defer t.dropProbes(gone)
	for _, tp := range t.probes {
		if !kind.has(tp) {
			continue
		}
		if err := t.unregisterProbe(tp); err != nil {
			return err
		}
		gone[tp] = true
	}
	return nil
}
