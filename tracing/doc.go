// Package tracing is kpemu's kernel/trace: the tracefs tree users see
// as /sys/kernel/debug/tracing (or /sys/kernel/tracing), its ring buffer,
// tracers and events. It sits beside kprobes, not inside it: the kprobe
// events use kprobes, nothing below tracing knows of it.
//
// The kprobe-based trace events are Linux's
// kernel/trace/trace_kprobe.c, with the tracefs files that drive them:
// kprobe_events, kprobe_profile, error_log, trace and
// events/<group>/<event>/enable.
//
// Each line written to kprobe_events is parsed as Linux 6.1 parses it,
// with the same errnos and the same error_log entries; each event owns one
// or more kprobes.Kprobe, registered disabled until the event is enabled.
//
// A group's filter file (events/GROUP/filter) is trace_events_filter.c's
// subsystem filter (subsysfilter.go): it sets its string on every event
// of the group, in error on those it does not fit. events/header_page
// and events/header_event are ring_buffer.c's header descriptions
// (headers.go).
//
// An event's trigger file is trace_events_trigger.c's (trigger.go):
// traceon, traceoff, snapshot, stacktrace, enable_event and
// disable_event run on the event's hits, and an event with a trigger, or
// named by one, is armed in Linux's soft mode, its records dropped until
// it is enabled.
//
// uprobe_events and uprobe_profile are trace_uprobe.c's (uprobe.go): the
// definitions are parsed as Linux 6.1 parses them, PATH resolved in the
// guest's file system, and the events get their events/ directories, but
// kpemu places no uprobes, so enabling one fails with EOPNOTSUPP. The two kinds
// share one list, shown and edited whole through dynamic_events
// (dynevent.go).
//
// The tracers are here too, on the kernel's ftrace core (kernel.FtraceOps):
// current_tracer's "function" tracer (trace_functions.c), which writes a
// TRACE_FN entry per call of every function set_ftrace_filter and
// set_ftrace_notrace let through, and the stack tracer (trace_stack.c:
// stack_trace, stack_max_size, stack_trace_filter; on and off through
// Tracing.StackTracerEnabledOps, Linux's /proc/sys/kernel/stack_tracer_enabled).
// The regex files parse and match as Linux's ftrace.c (ftrace.go), and
// set_ftrace_filter takes ftrace.c's function commands (funcprobe.go):
// traceon, traceoff, stacktrace, snapshot, dump, cpudump, enable_event
// and disable_event, each an ftrace ops of its own on its functions.
// printk_formats lists the kernel's and the modules' trace_printk
// formats (printkfmt.go).
//
// Everything the tracers record goes into a per-CPU ring buffer after
// ring_buffer.c (package ring): pages that events fill by their records'
// sizes, overwritten or dropped when full, with Linux's counters. trace,
// trace_pipe and per_cpu/cpuN/ print it as trace.c and trace_output.c do
// (trace.go); trace_options, options/, trace_clock and the buffer sizes
// are trace.c's settings (options.go); the raw, hex and bin options print
// the records through trace_output.c's raw, hex and binary printers
// (rawoutput.go). The other files at the tracing
// root, trace_marker, trace_marker_raw, saved_cmdlines and its size,
// saved_tgids, printk_formats, dyn_ftrace_total_info, timestamp_mode,
// buffer_percent, free_buffer, tracing_thresh, tracing_max_latency and
// tracing_cpumask, are trace.c's too (infofiles.go). snapshot and
// per_cpu/cpuN/snapshot show a second buffer that `echo 1 > snapshot` or
// the snapshot trigger swaps with the live one (snapshot.go).
//
// Static events (tracepoint.go) are Linux's TRACE_EVENTs
// sched:sched_process_fork, sched_process_exit, sched_process_free,
// sched_switch, sched_waking, sched_wakeup, sched_wakeup_new and
// signal:signal_generate, signal_deliver on the guest's tracepoints
// (kernel.Tracepoint): Linux 6.1's formats and ids, enable, filter and
// trigger; enabling one turns its static key on (the guest's NOPs become
// branches), and the guest's iterator hands the filled record over.
//
// set_event_pid, set_event_notrace_pid, set_ftrace_pid and
// set_ftrace_notrace_pid filter the events' and the function tracer's
// records by the task that makes them, as trace_events.c and ftrace.c
// do, and the event-fork and function-fork options make them follow
// forks and exits, through an ftrace hook on the guest's
// wake_up_new_task and release_task (pidfilter.go).
package tracing
