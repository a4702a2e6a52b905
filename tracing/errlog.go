package tracing

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"
)

// errCode is an entry of Linux's ERRORS table (kernel/trace/trace_probe.h).
type errCode int

const (
	errMaxactNoKprobe errCode = iota
	errBadMaxact
	errMaxactTooBig
	errBadProbeAddr
	errNonUniqSymbol
	errBadRetprobe
	errBadAddrSuffix
	errNoGroupName
	errGroupTooLong
	errBadGroupName
	errNoEventName
	errEventTooLong
	errBadEventName
	errEventExist
	errRetvalOnProbe
	errBadStackNum
	errBadArgNum
	errBadVar
	errBadRegName
	errBadMemAddr
	errBadImm
	errFileOnKprobe
	errImmstrNoClose
	errTooManyOps
	errDerefNeedBrace
	errBadDerefOffs
	errDerefOpenBrace
	errCommCantDeref
	errBadFetchArg
	errArrayNoClose
	errBadArraySuffix
	errBadArrayNum
	errArrayTooBig
	errBadType
	errBadString
	errBadSymstring
	errBadBitfield
	errArgNameTooLong
	errNoArgName
	errBadArgName
	errUsedArgName
	errArgTooLong
	errNoArgBody
	errBadInsnBndry
	errFailRegProbe
	errDiffProbeType
	errDiffArgType
	errSameProbe

	// The uprobe parser's (uprobe.go) and its fetch arguments'.
	errFileNotFound
	errNoRegularFile
	errBadRefcnt
	errRefcntOpenBrace
	errBadRefcntSuffix
	errBadUprobeOffs
	errBadFileOffs
	errSymOnUprobe

	// The event probes' (eprobe.go).
	errNoEventInfo
	errBadAttachEvent
	errBadAttachArg
	errNoEPFilter
)

// String is the message of each code, verbatim as Linux 6.1 prints it.
func (c errCode) String() string {
	switch c {
	case errMaxactNoKprobe:
		return "Maxactive is not for kprobe"
	case errBadMaxact:
		return "Invalid maxactive number"
	case errMaxactTooBig:
		return "Maxactive is too big"
	case errBadProbeAddr:
		return "Invalid probed address or symbol"
	case errNonUniqSymbol:
		return "The symbol is not unique"
	case errBadRetprobe:
		return "Retprobe address must be an function entry"
	case errBadAddrSuffix:
		return "Invalid probed address suffix"
	case errNoGroupName:
		return "Group name is not specified"
	case errGroupTooLong:
		return "Group name is too long"
	case errBadGroupName:
		return "Group name must follow the same rules as C identifiers"
	case errNoEventName:
		return "Event name is not specified"
	case errEventTooLong:
		return "Event name is too long"
	case errBadEventName:
		return "Event name must follow the same rules as C identifiers"
	case errEventExist:
		return "Given group/event name is already used by another event"
	case errRetvalOnProbe:
		return "$retval is not available on probe"
	case errBadStackNum:
		return "Invalid stack number"
	case errBadArgNum:
		return "Invalid argument number"
	case errBadVar:
		// 6.1.158's source has "valiable"; the stable kernels after it
		// (the oracle's 6.1.192) print the fixed spelling.
		return "Invalid $-variable specified"
	case errBadRegName:
		return "Invalid register name"
	case errBadMemAddr:
		return "Invalid memory address"
	case errBadImm:
		return "Invalid immediate value"
	case errFileOnKprobe:
		return "File offset is not available with kprobe"
	case errImmstrNoClose:
		return "String is not closed with '\"'"
	case errTooManyOps:
		return "Dereference is too much nested"
	case errDerefNeedBrace:
		return "Dereference needs a brace"
	case errBadDerefOffs:
		return "Invalid dereference offset"
	case errDerefOpenBrace:
		return "Dereference brace is not closed"
	case errCommCantDeref:
		return "$comm can not be dereferenced"
	case errBadFetchArg:
		return "Invalid fetch argument"
	case errArrayNoClose:
		return "Array is not closed"
	case errBadArraySuffix:
		return "Array has wrong suffix"
	case errBadArrayNum:
		return "Invalid array size"
	case errArrayTooBig:
		return "Array number is too big"
	case errBadType:
		return "Unknown type is specified"
	case errBadString:
		return "String accepts only memory argument"
	case errBadSymstring:
		return "Symbol String doesn't accept data/userdata"
	case errBadBitfield:
		return "Invalid bitfield"
	case errArgNameTooLong:
		return "Argument name is too long"
	case errNoArgName:
		return "Argument name is not specified"
	case errBadArgName:
		return "Argument name must follow the same rules as C identifiers"
	case errUsedArgName:
		return "This argument name is already used"
	case errArgTooLong:
		return "Argument expression is too long"
	case errNoArgBody:
		return "No argument expression"
	case errBadInsnBndry:
		return "Probe point is not an instruction boundary"
	case errFailRegProbe:
		return "Failed to register probe event"
	case errDiffProbeType:
		return "Probe type is different from existing probe"
	case errDiffArgType:
		return "Argument type or name is different from existing probe"
	case errSameProbe:
		return "There is already the exact same probe event"
	case errFileNotFound:
		return "Failed to find the given file"
	case errNoRegularFile:
		return "Not a regular file"
	case errBadRefcnt:
		return "Invalid reference counter offset"
	case errRefcntOpenBrace:
		return "Reference counter brace is not closed"
	case errBadRefcntSuffix:
		return "Reference counter has wrong suffix"
	case errBadUprobeOffs:
		return "Invalid uprobe offset"
	case errBadFileOffs:
		return "Invalid file offset value"
	case errSymOnUprobe:
		return "Symbol is not available with uprobe"
	case errNoEventInfo:
		return "This requires both group and event name to attach"
	case errBadAttachEvent:
		return "Attached event does not exist"
	case errBadAttachArg:
		return "Attached event does not have this field"
	case errNoEPFilter:
		return "No filter rule after 'if'"
	}
	return fmt.Sprintf("error %d", int(c))
}

// maxErrLogEntries is TRACING_LOG_ERRS_MAX.
const maxErrLogEntries = 16

type errLogEntry struct {
	ts  time.Duration
	loc string
	msg string
	cmd string
	pos int
}

// errorLog is tracing/error_log: the last 16 parse errors.
type errorLog struct {
	mu      sync.Mutex
	entries []errLogEntry
}

func (l *errorLog) add(e errLogEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) == maxErrLogEntries {
		l.entries = append(l.entries[:0:0], l.entries[1:]...)
	}
	l.entries = append(l.entries, e)
}

func (l *errorLog) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = nil
}

// show is tracing_err_log_seq_show.
func (l *errorLog) show(w *bytes.Buffer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.entries {
		us := e.ts / time.Microsecond
		fmt.Fprintf(w, "[%5d.%06d] %s: error: %s\n", us/1e6, us%1e6, e.loc, e.msg)
		fmt.Fprintf(w, "  Command: %s\n", e.cmd)
		w.WriteString(strings.Repeat(" ", len("  Command: ")+e.pos))
		w.WriteString("^\n")
	}
}

// probeLog is trace_probe_log: the subsystem, the argv of the command
// being parsed and the index of the argument under scrutiny, to place the
// caret.
type probeLog struct {
	sys   string // trace_probe_log_init's subsystem; "" is "trace_kprobe"
	argv  []string
	index int
	err   *errLogEntry // the error logged, if any
	// earlier are the errors logged before err, oldest first: Linux
	// logs each, and a few parses (an event probe's) log two.
	earlier []errLogEntry
}

// flush puts the errors logged into el, stamped now.
func (p *probeLog) flush(el *errorLog, now time.Duration) {
	for _, e := range p.earlier {
		e.ts = now
		el.add(e)
	}
	if p.err != nil {
		p.err.ts = now
		el.add(*p.err)
	}
}

// logErr is __trace_probe_log_err: the caret goes offset bytes into
// argv[index], or just past the command when index is past the end.
func (p *probeLog) logErr(offset int, code errCode) {
	pos, n := 0, 0
	for i, a := range p.argv {
		if i == p.index {
			pos = n
		}
		n += len(a) + 1
	}
	if p.index >= len(p.argv) {
		pos, offset = n, 0
	}
	sys := p.sys
	if sys == "" {
		sys = "trace_kprobe"
	}
	if p.err != nil {
		p.earlier = append(p.earlier, *p.err)
	}
	p.err = &errLogEntry{loc: sys, msg: code.String(), cmd: strings.Join(p.argv, " "), pos: pos + offset}
}
