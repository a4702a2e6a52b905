// Package events is kprobe-based trace events, after Linux's
// kernel/trace/trace_kprobe.c, and the tracefs files that drive them:
// tracing/kprobe_events, kprobe_profile, error_log, trace and
// events/<group>/<event>/enable.
//
// Each line written to kprobe_events is parsed as Linux 6.1 parses it,
// with the same errnos and the same error_log entries; each event owns one
// or more kprobes.Kprobe, registered disabled until the event is enabled.
package events
