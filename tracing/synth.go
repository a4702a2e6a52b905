package tracing

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"syscall"

	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// Synthetic events, after Linux 6.1's kernel/trace/trace_events_synth.c:
// synthetic_events (and dynamic_events' s: lines) define events of the
// group "synthetic" from a list of typed fields; each gets its
// events/synthetic/NAME/ directory, id, format, enable, filter and
// trigger. They share the dynamic events' list (Tracing.probes) with the
// kprobe and uprobe events, as Linux's dyn_event_list, each one a
// traceProbe that probes nothing.
//
// Hist triggers' actions fire them (histvar.go's fireSynth), as in
// Linux only hist actions (and kernel code through synth_event_trace())
// do: an armed file runs its triggers and, enabled, records the event.

const (
	synthSystem    = "synthetic" // SYNTH_SYSTEM
	synthFieldsMax = 64          // SYNTH_FIELDS_MAX
	strVarLenMax   = 256         // STR_VAR_LEN_MAX (MAX_FILTER_STR_VAL)
)

// Linux's synthetic_events error texts (trace_events_synth.c's ERRORS).
const (
	synthErrBadName          = "Illegal name"
	synthErrInvalidCmd       = "Command must be of the form: <name> field[;field] ..."
	synthErrInvalidDynCmd    = "Command must be of the form: s or -:[synthetic/]<name> field[;field] ..."
	synthErrEventExists      = "Event already exists"
	synthErrTooManyFields    = "Too many fields"
	synthErrIncompleteType   = "Incomplete type"
	synthErrInvalidType      = "Invalid type"
	synthErrInvalidField     = "Invalid field"
	synthErrInvalidArraySpec = "Invalid array specification"
)

// synthField is a struct synth_field.
type synthField struct {
	typ     string // "u64", "unsigned int", "char[16]", "__data_loc char[]", ...
	name    string
	size    int
	signed  bool
	str     bool // a char array, fixed or dynamic
	stack   bool // a long[] stacktrace
	dynamic bool // __data_loc
}

// synthEvent is what a synthetic event has beyond the event: its fields.
type synthEvent struct {
	fields []synthField
}

// synthParser parses one synthetic_events (or dynamic_events s:) command,
// keeping the command as last_cmd for error_log's caret.
type synthParser struct {
	t       *Tracing
	lastCmd string
}

// errpos is errpos(): where str first occurs in the command, 0 if not.
func (p *synthParser) errpos(str string) int {
	if i := strings.Index(p.lastCmd, str); i >= 0 {
		return i
	}
	return 0
}

// fail is synth_err(): an error_log entry, and EINVAL (or errno).
func (p *synthParser) fail(msg string, pos int, errno syscall.Errno) error {
	p.t.top.errlog.add(errLogEntry{ts: p.t.now(), loc: "synthetic_events", msg: msg, cmd: p.lastCmd, pos: pos})
	return fmt.Errorf("%w: %s: %q", errno, msg, p.lastCmd)
}

// argvSplit is argv_split(): the words between isspace() runs.
func argvSplit(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
}

// checkCommand is check_command(): the part before the first ';' holds
// the name, a type and a field name, unless it is a removal.
func checkCommand(raw string) bool {
	first, _, _ := strings.Cut(raw, ";")
	if strings.HasPrefix(first, "!") {
		return true
	}
	return len(argvSplit(first)) >= 3
}

// writeSynthEvents is synthetic_events' write (synth_events_write).
func (t *Tracing) writeSynthEvents(_ context.Context, p []byte, _ int64) (int, error) {
	return t.parseRunCommand(p, "synthetic_events", t.createOrDeleteSynth)
}

// createOrDeleteSynth is create_or_delete_synth_event: "NAME FIELDS"
// makes an event, "!NAME ..." removes one (whatever follows the name).
func (t *Tracing) createOrDeleteSynth(raw string) error {
	raw = skipSpaces(raw)
	if raw == "" {
		return nil
	}
	p := &synthParser{t: t, lastCmd: raw}
	if !checkCommand(raw) {
		return p.fail(synthErrInvalidCmd, 0, syscall.EINVAL)
	}
	i := strings.IndexAny(raw, " \t")
	if i < 0 && raw[0] != '!' {
		return p.fail(synthErrInvalidCmd, 0, syscall.EINVAL)
	}
	name, fields := raw, ""
	if i >= 0 {
		name, fields = raw[:i], skipSpaces(raw[i:])
	}
	if name[0] == '!' {
		return t.deleteSynth(name[1:])
	}
	return p.create(name, fields)
}

// createSynthDyn is create_synth_event, dynamic_events' parser of
// "s:[synthetic/]NAME FIELDS"; errCanceled for any other line.
func (t *Tracing) createSynthDyn(raw string) error {
	raw = skipSpaces(raw)
	if raw == "" {
		return nil
	}
	p := &synthParser{t: t, lastCmd: raw}
	if !strings.HasPrefix(raw, "s:") {
		return errCanceled
	}
	sp := strings.IndexAny(raw, " \t")
	if sp < 0 {
		return p.fail(synthErrInvalidCmd, 0, syscall.EINVAL)
	}
	fields := skipSpaces(raw[sp:])
	start := 2
	// The '/' is looked for in the whole rest of the line, as Linux does.
	if strings.Contains(raw[start:], "/") {
		if !strings.HasPrefix(raw[start:], synthSystem+"/") {
			return p.fail(synthErrInvalidDynCmd, 0, syscall.EINVAL)
		}
		start += len(synthSystem) + 1
	}
	if !checkCommand(raw[start:]) {
		return p.fail(synthErrInvalidCmd, 0, syscall.EINVAL)
	}
	name := ""
	if sp > start {
		name = raw[start:sp]
	}
	return p.create(name, fields)
}

// create is __create_synth_event.
func (p *synthParser) create(name, rawFields string) error {
	t := p.t
	if name == "" {
		return p.fail(synthErrInvalidCmd, 0, syscall.EINVAL)
	}
	if !isGoodName(name) {
		return p.fail(synthErrBadName, p.errpos(name), syscall.EINVAL)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.findSynth(name) != nil {
		return p.fail(synthErrEventExists, p.errpos(name), syscall.EEXIST)
	}
	var fields []synthField
	for _, chunk := range strings.Split(rawFields, ";") {
		argv := argvSplit(chunk)
		for consumed := 0; consumed < len(argv); {
			f, n, err := p.parseField(argv[consumed:])
			if err != nil {
				return err
			}
			consumed += n
			if len(fields) == synthFieldsMax {
				return p.fail(synthErrTooManyFields, 0, syscall.EINVAL)
			}
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return p.fail(synthErrInvalidCmd, 0, syscall.EINVAL)
	}
	ev := &event{group: synthSystem, name: name, synth: &synthEvent{fields: fields}}
	if old := t.events[ev.key()]; old != nil {
		// trace_add_event_call would add a second event of the name.
		return fmt.Errorf("%w: %s is another event", syscall.EEXIST, ev.key())
	}
	if err := t.createEventFiles(ev); err != nil {
		t.log.Warn("Failed to register synthetic event: " + name)
		return err
	}
	ev.id = t.nextID
	t.nextID++
	t.addEvent(ev)
	tp := &traceProbe{ev: ev}
	ev.probes = append(ev.probes, tp)
	t.probes = append(t.probes, tp)
	return nil
}

// parseField is parse_synth_field: "TYPE NAME" or "unsigned TYPE NAME",
// NAME with an optional [N]; it returns the words it took.
func (p *synthParser) parseField(argv []string) (synthField, int, error) {
	var f synthField
	prefix, ftype, fname, n := "", argv[0], "", 2
	if ftype == "unsigned" {
		if len(argv) < 3 {
			return f, 0, p.fail(synthErrIncompleteType, p.errpos(ftype), syscall.EINVAL)
		}
		prefix, ftype, fname, n = "unsigned ", argv[1], argv[2], 3
	} else if len(argv) > 1 {
		fname = argv[1]
	}
	if fname == "" {
		return f, 0, p.fail(synthErrInvalidField, p.errpos(ftype), syscall.EINVAL)
	}
	name, array := fname, ""
	if i := strings.IndexByte(fname, '['); i >= 0 {
		name, array = fname[:i], fname[i:]
	}
	if !isGoodName(name) {
		return f, 0, p.fail(synthErrBadName, p.errpos(fname), syscall.EINVAL)
	}
	f.name = name
	f.typ = prefix + ftype + array
	size := synthFieldSize(f.typ)
	switch {
	case size < 0 && array != "":
		return f, 0, p.fail(synthErrInvalidArraySpec, p.errpos(fname), syscall.EINVAL)
	case size < 0:
		return f, 0, p.fail(synthErrInvalidType, p.errpos(ftype), syscall.EINVAL)
	case size == 0:
		if !synthIsString(f.typ) && !synthIsStack(f.typ) {
			return f, 0, p.fail(synthErrInvalidType, p.errpos(ftype), syscall.EINVAL)
		}
		f.typ = "__data_loc " + f.typ
		f.dynamic = true
		size = 8
	}
	f.size = size
	f.str = synthIsString(f.typ)
	f.stack = !f.str && synthIsStack(f.typ)
	f.signed = !strings.HasPrefix(f.typ, "u") && f.typ != "gfp_t"
	return f, n, nil
}

func synthIsString(typ string) bool { return strings.Contains(typ, "char[") }
func synthIsStack(typ string) bool  { return strings.Contains(typ, "long[") }

// synthFieldSizes are synth_field_size's named types.
var synthFieldSizes = map[string]int{
	"s64": 8, "u64": 8, "s32": 4, "u32": 4, "s16": 2, "u16": 2, "s8": 1, "u8": 1,
	"char": 1, "unsigned char": 1, "int": 4, "unsigned int": 4, "long": 8, "unsigned long": 8,
	"bool": 1, "pid_t": 4, "gfp_t": 4,
}

// synthFieldSize is synth_field_size: the named types' sizes, a char[N]
// string's N (0 for char[], a dynamic string), 0 for a long[] stack
// and for what is unknown, negative for a bad char[N].
func synthFieldSize(typ string) int {
	if n, ok := synthFieldSizes[typ]; ok {
		return n
	}
	if synthIsString(typ) {
		return synthStringSize(typ)
	}
	return 0
}

// synthStringSize is synth_field_string_size.
func synthStringSize(typ string) int {
	start := strings.Index(typ, "char[") + len("char[")
	end := strings.IndexByte(typ, ']')
	if end < 0 || end < start || len(typ) > end+1 {
		return -1
	}
	digits := typ[start:end]
	if len(digits) > 3 {
		return -1
	}
	if digits == "" {
		return 0
	}
	v, err := kstr.Strtoull(digits, 0) // kstrtouint(buf, 0, &size)
	if err != nil || v > strVarLenMax {
		return -1
	}
	return int(v)
}

// findSynth is find_synth_event; t.mu is held.
func (t *Tracing) findSynth(name string) *event {
	for _, tp := range t.probes {
		if tp.ev.synth != nil && tp.ev.name == name {
			return tp.ev
		}
	}
	return nil
}

// deleteSynth is synth_event_delete: ENOENT for no such event, EBUSY
// for one that is enabled (or armed for a trigger).
func (t *Tracing) deleteSynth(name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	ev := t.findSynth(name)
	if ev == nil {
		return fmt.Errorf("%w: no synthetic event %s", syscall.ENOENT, name)
	}
	tp := ev.probes[0]
	if err := t.unregisterProbe(tp); err != nil {
		return err
	}
	t.dropProbes(map[*traceProbe]bool{tp: true})
	return nil
}

// showSynthEvents is synthetic_events' read (synth_events_seq_show).
func (t *Tracing) showSynthEvents(_ context.Context, w *bytes.Buffer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range t.probes {
		if tp.ev.synth != nil {
			showSynth(w, tp.ev)
		}
	}
	return nil
}

// showSynth is __synth_event_show: "NAME\tTYPE NAME; TYPE NAME", the
// types without __data_loc.
func showSynth(w *bytes.Buffer, ev *event) {
	w.WriteString(ev.name)
	w.WriteByte('\t')
	for i, f := range ev.synth.fields {
		if i > 0 {
			w.WriteString("; ")
		}
		fmt.Fprintf(w, "%s %s", strings.TrimPrefix(f.typ, "__data_loc "), f.name)
	}
	w.WriteByte('\n')
}

// synthFieldFmt is synth_field_fmt.
func synthFieldFmt(typ string) string {
	switch typ {
	case "s64":
		return "%lld"
	case "u64":
		return "%llu"
	case "s32", "s16", "s8", "char", "int", "bool", "pid_t":
		return "%d"
	case "u32", "u16", "u8", "unsigned char", "unsigned int":
		return "%u"
	case "long":
		return "%ld"
	case "unsigned long":
		return "%lu"
	case "gfp_t":
		return "%x"
	}
	if synthIsString(typ) || synthIsStack(typ) {
		return "%s"
	}
	return "%llu"
}

// showSynthFormat is a synthetic event's format file: the fields as
// synth_event_define_fields lays them out (every one in a u64 slot, a
// char[N] string in STR_VAR_LEN_MAX bytes) and the print fmt
// set_synth_event_print_fmt makes.
func showSynthFormat(w *bytes.Buffer, ev *event) {
	common, _ := recordFields(ev)
	fmt.Fprintf(w, "name: %s\nID: %d\nformat:\n", ev.name, ev.id)
	for _, f := range common {
		writeFormatField(w, f)
	}
	w.WriteByte('\n')
	off := traceEntryHeadSize
	for _, f := range ev.synth.fields {
		name, ctype := f.name, f.typ
		// f_show: an array type prints as "TYPE NAME[]".
		if i := strings.IndexByte(ctype, '['); i >= 0 && !f.dynamic {
			ctype, name = ctype[:i], name+"[]"
		}
		writeFormatField(w, field{ctype, name, off, f.size, f.signed})
		if f.str && !f.dynamic {
			off += strVarLenMax
		} else {
			off += 8
		}
	}
	w.WriteString("\nprint fmt: \"")
	for i, f := range ev.synth.fields {
		if i > 0 {
			w.WriteString(", ")
		}
		fmt.Fprintf(w, "%s=%s", f.name, synthFieldFmt(f.typ))
	}
	w.WriteByte('"')
	for _, f := range ev.synth.fields {
		switch {
		case f.str && f.dynamic:
			fmt.Fprintf(w, ", __get_str(%s)", f.name)
		case f.stack:
			fmt.Fprintf(w, ", __get_stacktrace(%s)", f.name)
		default:
			fmt.Fprintf(w, ", REC->%s", f.name)
		}
	}
	w.WriteByte('\n')
}

// printSynthVerbose is print_synth_event with the verbose option: each
// field's format (synth_field_fmt) before its name, the values read back
// from the record as recordSynth (histvar.go) laid it out. false if the
// record is not as long as its fields say.
func printSynthVerbose(w *bytes.Buffer, name string, se *synthEvent, raw []byte) bool {
	var b bytes.Buffer
	b.WriteString(name + ": ")
	off := 0
	for i, f := range se.fields {
		sep := " "
		if i == len(se.fields)-1 {
			sep = ""
		}
		b.WriteString(synthFieldFmt(f.typ) + " ")
		switch {
		case f.str && f.dynamic:
			if off+4 > len(raw) {
				return false
			}
			loc := binary.LittleEndian.Uint32(raw[off:])
			start, n := int(loc&0xffff)-traceEntryHeadSize, int(loc>>16)
			if start < 0 || start+n > len(raw) {
				return false
			}
			fmt.Fprintf(&b, "%s=%s%s", f.name, cstring(raw[start:start+n]), sep)
			off += 8
		case f.str:
			if off+strVarLenMax > len(raw) {
				return false
			}
			fmt.Fprintf(&b, "%s=%s%s", f.name, cstring(raw[off:off+strVarLenMax]), sep)
			off += strVarLenMax
		default:
			if off+8 > len(raw) {
				return false
			}
			fmt.Fprintf(&b, "%s=%s%s", f.name, synthNum(f, binary.LittleEndian.Uint64(raw[off:])), sep)
			off += 8
		}
	}
	w.Write(b.Bytes())
	return true
}

// synthByID is the synthetic events by id, for a read with verbose.
func (t *Tracing) synthByID() map[uint16]*event {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[uint16]*event{}
	for _, ev := range t.events {
		if ev.synth != nil {
			out[uint16(ev.id)] = ev
		}
	}
	return out
}
