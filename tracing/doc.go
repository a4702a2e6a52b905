// Package tracing is kpemu's kernel/trace: the tracefs tree users see
// as /sys/kernel/debug/tracing (or /sys/kernel/tracing), with its ring
// buffer, tracers and trace events. It sits beside kprobes, not inside
// it: the kprobe events use kprobes, and nothing below tracing knows of
// it. Every file keeps Linux 6.1's formats and errnos.
//
// # State
//
// Tracing (tracing.go) is what every tracing root shares, Linux's
// globals: the event list, the dynamic events, the static events, the
// saved comms and tgids, the trace_printk formats, tracing_thresh, the
// stack tracer and the hooks into the kernel. TraceArray (array.go) is
// one root, Linux's struct trace_array: its ring buffer and tracing_on,
// snapshot buffer, trace options and clock, buffer sizes,
// current_tracer with its function filters and commands, pid filters,
// error_log, and each event's enable, filter and triggers (eventFile).
// Tracing.top is the files in the tracing directory itself; each
// instances/NAME is another (instance.go). Every array's files come from
// one registration, TraceArray.createFiles, and every event has a file
// in every array: a hit is recorded in each array whose file of the
// event is enabled.
//
// # Packages below this one
//
//   - ring: the per-CPU ring buffer (ring_buffer.c), generic in what an
//     entry records, the events/header_page and header_event texts, and
//     the pages ring_buffer_read_page gives a binary reader (page.go).
//   - filter: the event filter language (trace_events_filter.c): Check's
//     verdicts with Linux's codes and carets, Parse, Eval.
//   - internal/kstr: lib/'s kstrtox.c, simple_strtoul and glob.c.
//
// # Files, by job (Linux's file in parentheses)
//
// The arrays:
//
//   - array.go, instance.go: TraceArray, the files every array has, and
//     instances/, whose mkdir and rmdir make and free an array
//     (trace.c's trace_array_create, __remove_instance).
//
// The ring buffer's contents and how they are read:
//
//   - trace.go: the entries the tracers write, commit, and the trace,
//     trace_pipe, per_cpu/cpuN/ and buffer size files (trace.c,
//     trace_output.c).
//   - rawoutput.go: the raw, hex and bin options' printers (trace_output.c).
//   - options.go: trace_options, options/, trace_clock (trace.c).
//   - latency.go: the latency-format and verbose options' header and
//     line context (trace.c, trace_output.c).
//   - funcopts.go: the function tracer's func_stack_trace and
//     func-no-repeats, and its func_repeats records (trace_functions.c).
//   - taskinfo.go: the saved comms and tgids of the tasks in the trace
//     (trace.c's savedcmd and tgid_map).
//   - infofiles.go: trace_marker, trace_marker_raw, saved_cmdlines and its
//     size, saved_tgids, dyn_ftrace_total_info, timestamp_mode,
//     buffer_percent, free_buffer, tracing_thresh, tracing_max_latency,
//     tracing_cpumask (trace.c).
//   - snapshot.go: snapshot and per_cpu/cpuN/snapshot, the second buffer
//     that `echo 1 > snapshot` or the snapshot trigger swaps with the
//     live one (trace.c's CONFIG_TRACER_SNAPSHOT).
//   - headers.go: events/header_page and events/header_event.
//   - rawpage.go: per_cpu/cpuN/trace_pipe_raw and snapshot_raw, the
//     buffer's pages as binary readers (trace-cmd) take them, each
//     entry's record laid out as its format says, and events/ftrace/
//     (ftraceevents.go: Linux 6.1 arm64's built-in events' formats and
//     ids) (trace.c's tracing_buffers_read, trace_entries.h).
//
// The tracers, on the kernel's ftrace core (kernel.FtraceOps):
//
//   - ftrace.go: current_tracer's "function" tracer (trace_functions.c),
//     a TRACE_FN entry per call of every function set_ftrace_filter and
//     set_ftrace_notrace let through, and the regex files (ftrace.c).
//   - fgraph.go: current_tracer's "function_graph" tracer on the
//     kernel's graph (kernel.FgraphOps: the guest's return_to_handler),
//     its funcgraph_entry and funcgraph_exit records and their output
//     (leaves, nesting, durations, context-switch and irq lines,
//     comments), its options/funcgraph-* (and sleep-time, graph-time),
//     set_graph_function, set_graph_notrace and max_graph_depth
//     (trace_functions_graph.c, ftrace.c, trace.h).
//   - profile.go: the function profiler, function_profile_enabled and
//     trace_stat/functionN, on the graph too (ftrace.c's
//     CONFIG_FUNCTION_PROFILER, trace_stat.c).
//   - funcprobe.go: set_ftrace_filter's function commands, traceon,
//     traceoff, stacktrace, snapshot, dump, cpudump, enable_event and
//     disable_event, each an ftrace ops of its own (ftrace.c,
//     trace_functions.c).
//   - stack.go: the stack tracer, stack_trace, stack_max_size and
//     stack_trace_filter, on and off through
//     Tracing.StackTracerEnabledOps, Linux's
//     /proc/sys/kernel/stack_tracer_enabled (trace_stack.c).
//   - pidfilter.go: set_event_pid, set_event_notrace_pid, set_ftrace_pid
//     and set_ftrace_notrace_pid, with the event-fork and function-fork
//     options following forks and exits through an ftrace hook on the
//     guest's wake_up_new_task and release_task (trace_events.c, ftrace.c).
//   - printk.go, printkfmt.go: the guest's trace_printk() and
//     printk_formats (trace_printk.c).
//
// The trace events:
//
//   - events.go: the event list and enabling an event (trace_events.c).
//   - files.go: the events/ directories and enable files, kprobe_events
//     and kprobe_profile, and the mirror of the tree in the guest's
//     tracefs (trace_events.c, trace_kprobe.c).
//   - tracefs.go: the files at the root around the events: tracing_on,
//     current_tracer, available_tracers, README, dynamic_events,
//     set_event, available_events, and each event's format, filter and
//     trigger (trace.c, trace_events.c).
//   - tracepoint.go: the static events on the guest's tracepoints
//     (kernel.Tracepoint), sched:*, signal:* and raw_syscalls:* with
//     Linux 6.1's formats and ids; enabling one turns its static key on.
//   - kmem.go: kmem:kmalloc and kmem:kfree, the guest slab's (kmem.h).
//   - syscalls.go: syscalls:sys_enter_<name> and sys_exit_<name> for each
//     system call in the guest's table, fed by the raw_syscalls
//     tracepoints (trace_syscalls.c).
//   - filter.go, subsysfilter.go: an event's and a group's filter file
//     (trace_events_filter.c; the language is package filter's).
//   - trigger.go: the trigger files, traceon, traceoff, snapshot,
//     stacktrace, enable_event, disable_event, enable_hist and
//     disable_hist, soft mode, and the event probes' hidden triggers
//     (trace_events_trigger.c).
//   - hist.go: hist triggers and each event's hist file: keys, values,
//     sort, size, name (shared histograms), pause/cont/clear, the field
//     modifiers, variables and constant-folded expressions, with Linux's
//     error_log entries; a map keyed by the key fields' bytes, per
//     trigger (trace_events_hist.c, tracing_map.c).
//   - histvar.go: inter-event hists: variable references between
//     histograms, field variables (a hist added to another event for
//     its field), onmatch, onmax and onchange with trace() (firing a
//     synthetic event: its triggers, event probes on it, its record),
//     save() and snapshot() (the array's conditional snapshot).
//   - markerev.go: events/ftrace/print's trigger and hist files, whose
//     triggers a trace_marker write runs (trace.c's trace_marker_file).
//
// The dynamic events, parsed as Linux 6.1 parses them, with its errnos
// and error_log entries:
//
//   - kprobe.go: the kprobe events; each owns one or more
//     kprobes.Kprobe, registered disabled until the event is enabled
//     (trace_kprobe.c).
//   - jevent.go: kpemu's j: events, a jprobe on a function with its
//     parameters from DWARF (kpemu's own).
//   - uprobe.go: uprobe_events and uprobe_profile; PATH resolves in the
//     guest's file system; enabling an event registers its consumer with
//     kprobes.RegisterUprobe (the BRKs in the guest's processes; see
//     kprobes/uprobes.go), whose hits record through recordUprobe
//     (trace_uprobe.c).
//   - synth.go: synthetic_events, the synthetic events' definitions and
//     their events/synthetic/ directories; hist actions fire them
//     (histvar.go) (trace_events_synth.c).
//   - eprobe.go: the event probes, e: in dynamic_events: an event on a
//     static or synthetic event, its arguments fetched from that event's record
//     ($FIELD) and recorded by a hidden trigger on it (trigger.go) while
//     enabled (trace_eprobe.c).
//   - dynevent.go: dynamic_events, the kprobe, uprobe, synthetic and
//     event probe events' one list (trace_dynevent.c).
//   - args.go, fetch.go: the FETCHARGS language and fetching the values
//     at a hit (trace_probe.c, trace_probe_tmpl.h).
//   - errlog.go: error_log (trace.c's tracing_log_err, trace_probe.c's
//     messages).
package tracing
