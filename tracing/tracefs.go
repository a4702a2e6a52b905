package tracing

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
)

// The tracefs files around the kprobe events that shell tools and Linux's
// selftests touch: tracing_on, current_tracer, available_tracers, README,
// dynamic_events, set_event, available_events, and per event format,
// filter and trigger.

// readme is tracing/README: what this tracefs accepts, in the words and
// patterns of Linux's mini-HOWTO, limited to what kpemu implements.
const readme = `tracing mini-HOWTO (kpemu):

# echo 0 > tracing_on : quick way to disable tracing
# echo 1 > tracing_on : quick way to re-enable tracing

 Important files:
  trace			- The static contents of the buffer
			  To clear the buffer write into this file: echo > trace
  trace_pipe		- A consuming read to see the contents of the buffer
  current_tracer	- function and latency tracers
  available_tracers	- list of configured tracers for current_tracer
  error_log	- error log for failed commands (that support it)
  buffer_size_kb	- view and modify size of per cpu buffer
  buffer_total_size_kb  - view total size of all cpu buffers

  trace_clock		- change the clock used to order events
       local:   Per cpu clock but may not be synced across CPUs
      global:   Synced across CPUs but slows tracing down.
     counter:   Not a clock, but just an increment
      uptime:   Jiffy counter from time of boot
        perf:   Same clock that perf events use

  timestamp_mode	- view the mode used to timestamp events
       delta:   Delta difference against a buffer-wide timestamp
    absolute:   Absolute (standalone) timestamp

  trace_marker		- Writes into this file writes into the kernel buffer

  trace_marker_raw		- Writes into this file writes binary data into the kernel buffer
  tracing_cpumask	- Limit which CPUs to trace
  trace_options		- Set format or modify how tracing happens
			  Disable an option by prefixing 'no' to the
			  option name
  saved_cmdlines_size	- echo command number in here to store comm-pid list
  tracing_on		- Enable or disable writing to the ring buffer
  available_events	- list of all events in the kernel
  set_event		- enable or disable events by name ("group:event")
  available_filter_functions - list of functions that can be filtered on
  set_ftrace_filter	- echo function name in here to only trace these
			  functions
	     accepts: func_full_name or glob-matching-pattern
	     modules: Can select a group via module
	      Format: :mod:<module-name>
	     example: echo :mod:ext3 > set_ftrace_filter
  set_ftrace_notrace	- echo function name in here to never trace.
	    accepts: func_full_name, *func_end, func_begin*, *func_middle*
	    modules: Can select a group via module command :mod:
	    Does not accept triggers
  set_graph_function	- Trace the nested calls of a function (function_graph)
  set_graph_notrace	- Do not trace the nested calls of a function (function_graph)
  max_graph_depth	- Trace a limited depth of nested calls (0 is unlimited)

  snapshot		- Like 'trace' but shows the content of the static
			  snapshot buffer. Read the contents for more
			  information
  stack_trace		- Shows the max stack trace when active
  stack_max_size	- Shows current max stack size that was traced
			  Write into this file to reset the max size (trigger a
			  new trace)
  stack_trace_filter	- Like set_ftrace_filter but limits what stack_trace
			  traces
  dynamic_events		- Create/append/remove/show the generic dynamic events
			  Write into this file to define/undefine new trace events.
  kprobe_events		- Create/append/remove/show the kernel dynamic events
			  Write into this file to define/undefine new trace events.
  uprobe_events		- Create/append/remove/show the userspace dynamic events
			  Write into this file to define/undefine new trace events.
	  accepts: event-definitions (one definition per line)
	   Format: p[:[<group>/][<event>]] <place> [<args>]
	           r[maxactive][:[<group>/][<event>]] <place> [<args>]
	           s:[synthetic/]<event> <field> [<field>]
	           e[:[<group>/][<event>]] <attached-group>.<attached-event> [<args>] [if <filter>]
	           j[:[<group>/][<event>]] <symbol> (kpemu: a jprobe-backed event)
	           -:[<group>/][<event>]
	    place: [<module>:]<symbol>[+<offset>]|<memaddr>
place (kretprobe): [<module>:]<symbol>[+<offset>]%return|<memaddr>
   place (uprobe): <path>:<offset>[%return][(ref_ctr_offset)]
	     args: <name>=fetcharg[:type]
	 fetcharg: (%<register>|$<efield>), @<address>, @<symbol>[+|-<offset>],
	           $stack<index>, $stack, $retval, $comm, $arg<N>,
	           +|-[u]<offset>(<fetcharg>), \imm-value, \"imm-string"
	     type: s8/16/32/64, u8/16/32/64, x8/16/32/64, string, symbol,
	           b<bit-width>@<bit-offset>/<container-size>, ustring,
	           symstr, <type>\[<array-size>\]
	    field: <stype> <name>;
	    stype: u8/u16/u32/u64, s8/s16/s32/s64, pid_t,
	           [unsigned] char/int/long
	    efield: For event probes ('e' types), the field is on of the fields
	            of the <attached-group>/<attached-event>.
  events/		- Directory containing all trace event subsystems:
      enable		- Write 0/1 to enable/disable tracing of all events
  events/<system>/	- Directory containing all trace events for <system>:
      enable		- Write 0/1 to enable/disable tracing of all <system>
			  events
  events/<system>/<event>/	- Directory containing control files for
			  <event>:
      enable		- Write 0/1 to enable/disable tracing of <event>
      filter		- If set, only events passing filter are traced
      trigger		- If set, a command to perform when event is hit
	    Format: <trigger>[:count][if <filter>]
	   trigger: traceon, traceoff
	            enable_event:<system>:<event>
	            disable_event:<system>:<event>
	            enable_hist:<system>:<event>
	            disable_hist:<system>:<event>
		    stacktrace
		    snapshot
		    hist (see below)
	   example: echo traceoff > events/block/block_unplug/trigger
	            echo traceoff:3 > events/block/block_unplug/trigger
	            echo 'enable_event:kmem:kmalloc:3 if nr_rq > 1' > \
	                  events/block/block_unplug/trigger
	   The first disables tracing every time block_unplug is hit.
	   The second disables tracing the first 3 times block_unplug is hit.
	   The third enables the kmalloc event the first 3 times block_unplug
	     is hit and has value of greater than 1 for the 'nr_rq' event field.
	   Like function triggers, the counter is only decremented if it
	    enabled or disabled tracing.
	   To remove a trigger without a count:
	     echo '!<trigger> > <system>/<event>/trigger
	   To remove a trigger with a count:
	     echo '!<trigger>:0 > <system>/<event>/trigger
	   Filters can be ignored when removing a trigger.
      hist trigger	- If set, event hits are aggregated into a hash table
	    Format: hist:keys=<field1[,field2,...]>
	            [:<var1>=<field|var_ref|numeric_literal>[,<var2>=...]]
	            [:values=<field1[,field2,...]>]
	            [:sort=<field1[,field2,...]>]
	            [:size=#entries]
	            [:pause][:continue][:clear]
	            [:name=histname1]
	            [:<handler>.<action>]
	            [if <filter>]

	    Note, special fields can be used as well:
	            common_timestamp - to record current timestamp
	            common_cpu - to record the CPU the event happened on

	    A hist trigger variable can be:
	        - a reference to a field e.g. x=current_timestamp,
	        - a reference to another variable e.g. y=$x,
	        - a numeric literal: e.g. ms_per_sec=1000,
	        - an arithmetic expression: e.g. time_secs=current_timestamp/1000

	    hist trigger arithmetic expressions support addition(+), subtraction(-),
	    multiplication(*) and division(/) operators. An operand can be either a
	    variable reference, field or numeric literal.

	    When a matching event is hit, an entry is added to a hash
	    table using the key(s) and value(s) named, and the value of a
	    sum called 'hitcount' is incremented.  Keys and values
	    correspond to fields in the event's format description.  Keys
	    can be any field, or the special string 'stacktrace'.
	    Compound keys consisting of up to two fields can be specified
	    by the 'keys' keyword.  Values must correspond to numeric
	    fields.  Sort keys consisting of up to two fields can be
	    specified using the 'sort' keyword.  The sort direction can
	    be modified by appending '.descending' or '.ascending' to a
	    sort field.  The 'size' parameter can be used to specify more
	    or fewer than the default 2048 entries for the hashtable size.
	    If a hist trigger is given a name using the 'name' parameter,
	    its histogram data will be shared with other triggers of the
	    same name, and trigger hits will update this common data.

	    Reading the 'hist' file for the event will dump the hash
	    table in its entirety to stdout.  If there are multiple hist
	    triggers attached to an event, there will be a table for each
	    trigger in the output.  The table displayed for a named
	    trigger will be the same as any other instance having the
	    same name.  The default format used to display a given field
	    can be modified by appending any of the following modifiers
	    to the field name, as applicable:

	            .hex        display a number as a hex value
	            .sym        display an address as a symbol
	            .sym-offset display an address as a symbol and offset
	            .execname   display a common_pid as a program name
	            .syscall    display a syscall id as a syscall name
	            .log2       display log2 value rather than raw number
	            .buckets=size  display values in groups of size rather than raw number
	            .usecs      display a common_timestamp in microseconds
	            .percent    display a number of percentage value
	            .graph      display a bar-graph of a value

	    The 'pause' parameter can be used to pause an existing hist
	    trigger or to start a hist trigger but not log any events
	    until told to do so.  'continue' can be used to start or
	    restart a paused hist trigger.

	    The 'clear' parameter will clear the contents of a running
	    hist trigger and leave its current paused/active state
	    unchanged.

	    The enable_hist and disable_hist triggers can be used to
	    have one event conditionally start and stop another event's
	    already-attached hist trigger.  The syntax is analogous to
	    the enable_event and disable_event triggers.

	    Hist trigger handlers and actions are executed whenever a
	    a histogram entry is added or updated.  They take the form:

	        <handler>.<action>

	    The available handlers are:

	        onmatch(matching.event)  - invoke on addition or update
	        onmax(var)               - invoke if var exceeds current max
	        onchange(var)            - invoke action if var changes

	    The available actions are:

	        trace(<synthetic_event>,param list)  - generate synthetic event
	        save(field,...)                      - save current event fields
	        snapshot()                           - snapshot the trace buffer

      format		- The layout of the event's record and its print fmt
      id		- The event's id
  events/synthetic_events	- Create/append/remove/show synthetic events
	  Write into this file to define/undefine new synthetic events.
	     example: echo 'myevent u64 lat; char name[]' >> synthetic_events
`

func (t *Tracing) createTracefsFiles() error {
	ro := func(text string) debugfs.FileOps {
		return debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { w.WriteString(text); return nil }}
	}
	files := []struct {
		name string
		ops  debugfs.FileOps
		mode uint32
	}{
		{"README", ro(readme), 0o440},
		{"dynamic_events", debugfs.FileOps{Show: t.showDynEvents(dynAny), Write: t.writeDynamicEvents, Truncate: func(context.Context) error { return t.releaseAll(dynAny) }}, 0o640},
		{"uprobe_events", debugfs.FileOps{Show: t.showDynEvents(dynUprobe), Write: t.writeUprobeEvents, Truncate: func(context.Context) error { return t.releaseAll(dynUprobe) }}, 0o640},
		{"uprobe_profile", debugfs.FileOps{Show: t.showUprobeProfile}, 0o440},
		{"synthetic_events", debugfs.FileOps{Show: t.showSynthEvents, Write: t.writeSynthEvents, Truncate: func(context.Context) error { return t.releaseAll(dynSynth) }}, 0o640},
		{"available_events", debugfs.FileOps{Show: t.showAvailableEvents}, 0o440},
	}
	for _, f := range files {
		if _, err := t.tree.CreateFile(path.Join(t.dir, f.name), fsMode(f.mode), f.ops); err != nil {
			return fmt.Errorf("creating %s/%s: %w", t.dir, f.name, err)
		}
	}
	return t.createInfoFiles() // trace_marker, tracing_cpumask & co: infofiles.go
}

func (ta *TraceArray) showTracingOn(_ context.Context, w *bytes.Buffer) error {
	if ta.on.Load() {
		w.WriteString("1\n")
	} else {
		w.WriteString("0\n")
	}
	return nil
}

// writeTracingOn is rb_simple_write: a decimal number, non-zero is on.
// Turning it off wakes the buffer's waiters.
func (ta *TraceArray) writeTracingOn(_ context.Context, p []byte, _ int64) (int, error) {
	v, err := strconv.ParseUint(strings.TrimSuffix(string(p), "\n"), 10, 64)
	if err != nil {
		return 0, syscall.EINVAL
	}
	if was := ta.on.Swap(v != 0); was && v == 0 {
		// Off wakes the readers waiting: trace_pipe ends, a splice of
		// trace_pipe_raw returns 0.
		ta.buf.WakeAll()
	}
	return len(p), nil
}

// showSetEvent lists the array's enabled events as group:event.
func (ta *TraceArray) showSetEvent(_ context.Context, w *bytes.Buffer) error {
	t := ta.t
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ev := range t.sortedEvents() {
		if f := ta.file(ev); f != nil && f.enabled.Load() {
			fmt.Fprintf(w, "%s:%s\n", ev.group, ev.name)
		}
	}
	return nil
}

func (t *Tracing) showAvailableEvents(_ context.Context, w *bytes.Buffer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ev := range t.sortedEvents() {
		fmt.Fprintf(w, "%s:%s\n", ev.group, ev.name)
	}
	return nil
}

// sortedEvents is the events in the order of Linux's ftrace_events and
// tr->events lists, which available_events, set_event and every "enable
// all matching" walk: newest first (list_add), as the oracle showed;
// t.mu is held.
func (t *Tracing) sortedEvents() []*event {
	evs := make([]*event, 0, len(t.events))
	for _, ev := range t.events {
		evs = append(evs, ev)
	}
	sortEvents(evs) // tracepoint.go
	return evs
}

// eventBufSize is EVENT_BUF_SIZE: the longest word set_event takes.
const eventBufSize = 127

// writeSetEvent is ftrace_event_write: one word per write(2)
// (trace_get_user with a fresh parser), "[!][group:]event" (or
// "group:*", "*:*"), "!" disabling; the count consumed comes back, and
// the writer writes the rest again. A word ends at white space or at a
// NUL (the oracle's "kprobes:trg\0x\n" returned 12). A name that
// matches nothing is EINVAL.
func (ta *TraceArray) writeSetEvent(_ context.Context, p []byte, _ int64) (int, error) {
	t := ta.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if ta.removed.Load() {
		return 0, syscall.ENODEV
	}
	if len(p) == 0 {
		return 0, nil
	}
	parser := traceParser{size: eventBufSize + 1}
	read, err := parser.get(p)
	if err != nil {
		return 0, err
	}
	if !parser.loaded() {
		return read, nil
	}
	line, on := parser.word(), true
	if strings.HasPrefix(line, "!") {
		on, line = false, line[1:]
	}
	group, name := "", line
	if i := strings.IndexByte(line, ':'); i >= 0 {
		group, name = line[:i], line[i+1:]
	}
	matched := false
	var first error // __ftrace_set_clr_event_nolock goes on after an error
	for _, ev := range t.sortedEvents() {
		if (group == "" || group == "*" || group == ev.group) && (name == "" || name == "*" || name == ev.name) {
			matched = true
			if err := t.setEnabled(ta.file(ev), on); err != nil && first == nil {
				first = err
			}
		}
	}
	if first != nil {
		return 0, first
	}
	if !matched {
		return 0, syscall.EINVAL
	}
	return read, nil
}

// clearSetEvent: opening set_event with O_TRUNC disables every event.
func (ta *TraceArray) clearSetEvent(context.Context) error {
	t := ta.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if ta.removed.Load() {
		return syscall.ENODEV
	}
	for _, ev := range t.events {
		if err := t.setEnabled(ta.file(ev), false); err != nil {
			return err
		}
	}
	return nil
}

// eventControlFiles are the per-event files besides enable and id.
func (t *Tracing) eventControlFiles(f *eventFile) []struct {
	name string
	mode uint32
	ops  debugfs.FileOps
} {
	return []struct {
		name string
		mode uint32
		ops  debugfs.FileOps
	}{
		{"format", 0o440, debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { t.showFormat(w, f.ev); return nil }}},
		{"filter", 0o640, debugfs.FileOps{Show: t.showFilter(f), Write: t.writeFilter(f)}},
		{"trigger", 0o640, debugfs.FileOps{Show: t.showTrigger(f), Write: t.writeTrigger(f), Truncate: t.truncTrigger(f)}},
		{"hist", 0o440, debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { return t.showHist(f, w) }}},
	}
}

// field is one field of an event record, as format shows it.
type field struct {
	ctype  string
	name   string
	offset int
	size   int
	signed bool
}

// recordFields lays out the record of ev as Linux's trace_kprobe does: the
// common header, __probe_ip (or __probe_func and __probe_ret_ip), then the
// arguments.
func recordFields(ev *event) (common, probe []field) {
	common = []field{
		{"unsigned short", "common_type", 0, 2, false},
		{"unsigned char", "common_flags", 2, 1, false},
		{"unsigned char", "common_preempt_count", 3, 1, false},
		{"int", "common_pid", 4, 4, true},
	}
	off := 8
	if ev.isReturn {
		probe = append(probe, field{"unsigned long", "__probe_func", off, 8, false}, field{"unsigned long", "__probe_ret_ip", off + 8, 8, false})
		off += 16
	} else {
		probe = append(probe, field{"unsigned long", "__probe_ip", off, 8, false})
		off += 8
	}
	for _, p := range ev.params {
		probe = append(probe, field{p.Type, p.Name, off, int(p.Size), isSignedCType(p.Type)})
		off += int(p.Size)
	}
	for _, a := range ev.args {
		n := max(a.count, 1)
		ctype := a.typ.fieldType()
		if a.count > 0 {
			ctype = fmt.Sprintf("%s[%d]", ctype, a.count)
		}
		probe = append(probe, field{ctype, a.name, off, a.typ.size * n, a.typ.signed})
		off += a.typ.size * n
	}
	return common, probe
}

// fieldType is the fetch type's fmttype: the alias types print as their
// base (x64 is u64), strings as __data_loc.
func (ft fetchType) fieldType() string {
	switch {
	case ft.str:
		return "__data_loc char[]"
	case ft.symbol:
		return "u64"
	case ft.signed:
		return fmt.Sprintf("s%d", ft.size*8)
	}
	return fmt.Sprintf("u%d", ft.size*8)
}

// printFmt is the argument's part of the print fmt.
func (ft fetchType) printFmt() string {
	switch {
	case ft.str:
		return `\"%s\"`
	case ft.symbol:
		return "%pS"
	case ft.hex && ft.size == 8:
		return "0x%Lx"
	case ft.hex:
		return "0x%x"
	case ft.signed && ft.size == 8:
		return "%Ld"
	case ft.signed:
		return "%d"
	case ft.size == 8:
		return "%Lu"
	}
	return "%u"
}

// showFormat is the event's format file.
func (t *Tracing) showFormat(w *bytes.Buffer, ev *event) {
	if ev.static != nil {
		showStaticFormat(w, ev)
		return
	}
	if ev.synth != nil {
		showSynthFormat(w, ev)
		return
	}
	if ev.eprobe != nil {
		showEprobeFormat(w, ev)
		return
	}
	common, probe := recordFields(ev)
	fmt.Fprintf(w, "name: %s\nID: %d\nformat:\n", ev.name, ev.id)
	for _, f := range common {
		writeProbeFormatField(w, f)
	}
	w.WriteByte('\n')
	for _, f := range probe {
		writeProbeFormatField(w, f)
	}
	w.WriteString("\nprint fmt: \"")
	var args []string
	if ev.isReturn {
		w.WriteString("(%lx <- %lx)")
		args = append(args, "REC->__probe_func", "REC->__probe_ret_ip")
	} else {
		w.WriteString("(%lx)")
		args = append(args, "REC->__probe_ip")
	}
	for _, p := range ev.params {
		switch {
		case strings.HasSuffix(p.Type, "*"):
			fmt.Fprintf(w, " %s=0x%%lx", p.Name)
		case isSignedCType(p.Type):
			fmt.Fprintf(w, " %s=%%ld", p.Name)
		default:
			fmt.Fprintf(w, " %s=%%lu", p.Name)
		}
		args = append(args, "REC->"+p.Name)
	}
	for _, a := range ev.args {
		fmtArg(w, a, &args)
	}
	fmt.Fprintf(w, "\", %s\n", strings.Join(args, ", "))
}

// writeProbeFormatField is one "field:" line of a probe event's format.
// f_show: an array type ("u8[4]") puts its brackets after the name,
// empty, as a probe's fields have no len; a __data_loc type
// ("__data_loc char[][2]") stays whole.
func writeProbeFormatField(w *bytes.Buffer, f field) {
	s := 0
	if f.signed {
		s = 1
	}
	if i := strings.IndexByte(f.ctype, '['); i >= 0 && !strings.HasPrefix(f.ctype, "__data_loc") {
		fmt.Fprintf(w, "\tfield:%s %s[];\toffset:%d;\tsize:%d;\tsigned:%d;\n", f.ctype[:i], f.name, f.offset, f.size, s)
		return
	}
	fmt.Fprintf(w, "\tfield:%s %s;\toffset:%d;\tsize:%d;\tsigned:%d;\n", f.ctype, f.name, f.offset, f.size, s)
}

// fmtArg writes argument a's part of a probe event's print fmt
// (__set_print_fmt) and adds its values to args.
func fmtArg(w *bytes.Buffer, a *probeArg, args *[]string) {
	if a.count > 0 {
		fmt.Fprintf(w, " %s={", a.name)
		for i := 0; i < a.count; i++ {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(a.typ.printFmt())
			if a.typ.str {
				*args = append(*args, fmt.Sprintf("__get_str(%s[%d])", a.name, i))
			} else {
				*args = append(*args, fmt.Sprintf("REC->%s[%d]", a.name, i))
			}
		}
		w.WriteByte('}')
		return
	}
	fmt.Fprintf(w, " %s=%s", a.name, a.typ.printFmt())
	if a.typ.str {
		*args = append(*args, fmt.Sprintf("__get_str(%s)", a.name))
	} else {
		*args = append(*args, "REC->"+a.name)
	}
}
