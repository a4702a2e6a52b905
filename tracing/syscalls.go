package tracing

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/kpemu/kpemu/kernel"
)

// System call events, after kernel/trace/trace_syscalls.c: for each
// system call the guest implements, syscalls:sys_enter_<name> and
// sys_exit_<name>, made at boot as init_ftrace_syscalls makes them (the
// syscall table's entry, its symbol __arm64_sys_<name>, that name's
// metadata) and fed, as Linux's ftrace_syscall_enter/exit probes are, by
// the raw_syscalls:sys_enter and sys_exit tracepoints of the guest's
// syscall path. Their records are trace_syscalls.c's struct
// syscall_trace_enter (__syscall_nr, then each argument as an unsigned
// long) and syscall_trace_exit (__syscall_nr, ret); their lines are
// print_syscall_enter's `sys_openat(dfd: ffffffffffffff9c, ...)` and
// print_syscall_exit's `sys_openat -> 0x3`, without the event's name.

// sysArg is one argument of a system call, as SYSCALL_DEFINEx names it.
type sysArg struct{ ctype, name string }

// syscallMeta is a system call's struct syscall_metadata, with the ids
// its events have on the reference kernel (Debian's 6.1 arm64).
type syscallMeta struct {
	name            string // without sys_
	enterID, exitID int
	args            []sysArg
}

// syscallMetas are the metadata of the system calls the guest may
// implement, as the reference kernel's format files show them.
var syscallMetas = []syscallMeta{
	{"mkdirat", 656, 655, []sysArg{{"int", "dfd"}, {"const char *", "pathname"}, {"umode_t", "mode"}}},
	{"unlinkat", 654, 653, []sysArg{{"int", "dfd"}, {"const char *", "pathname"}, {"int", "flag"}}},
	{"symlinkat", 652, 651, []sysArg{{"const char *", "oldname"}, {"int", "newdfd"}, {"const char *", "newname"}}},
	{"readlinkat", 634, 633, []sysArg{{"int", "dfd"}, {"const char *", "pathname"}, {"char *", "buf"}, {"int", "bufsiz"}}},
	{"openat", 580, 579, []sysArg{{"int", "dfd"}, {"const char *", "filename"}, {"int", "flags"}, {"umode_t", "mode"}}},
	{"close", 576, 575, []sysArg{{"unsigned int", "fd"}}},
	{"getdents64", 664, 663, []sysArg{{"unsigned int", "fd"}, {"struct linux_dirent64 *", "dirent"}, {"unsigned int", "count"}}},
	{"lseek", 630, 629, []sysArg{{"unsigned int", "fd"}, {"off_t", "offset"}, {"unsigned int", "whence"}}},
	{"read", 628, 627, []sysArg{{"unsigned int", "fd"}, {"char *", "buf"}, {"size_t", "count"}}},
	{"write", 626, 625, []sysArg{{"unsigned int", "fd"}, {"const char *", "buf"}, {"size_t", "count"}}},
	{"exit", 94, 93, []sysArg{{"int", "error_code"}}},
	{"exit_group", 92, 91, []sysArg{{"int", "error_code"}}},
	{"nanosleep", 316, 315, []sysArg{{"struct __kernel_timespec *", "rqtp"}, {"struct __kernel_timespec *", "rmtp"}}},
	{"sched_setscheduler", 245, 244, []sysArg{{"pid_t", "pid"}, {"int", "policy"}, {"struct sched_param *", "param"}}},
	{"sched_yield", 229, 228, nil},
	{"prctl", 141, 140, []sysArg{{"int", "option"}, {"unsigned long", "arg2"}, {"unsigned long", "arg3"}, {"unsigned long", "arg4"}, {"unsigned long", "arg5"}}},
	{"getpid", 181, 180, nil},
	{"getppid", 177, 176, nil},
	{"socket", 1132, 1131, []sysArg{{"int", "family"}, {"int", "type"}, {"int", "protocol"}}},
	{"bind", 1128, 1127, []sysArg{{"int", "fd"}, {"struct sockaddr *", "umyaddr"}, {"int", "addrlen"}}},
	{"listen", 1126, 1125, []sysArg{{"int", "fd"}, {"int", "backlog"}}},
	{"accept", 1122, 1121, []sysArg{{"int", "fd"}, {"struct sockaddr *", "upeer_sockaddr"}, {"int *", "upeer_addrlen"}}},
	{"sendto", 1114, 1113, []sysArg{{"int", "fd"}, {"void *", "buff"}, {"size_t", "len"}, {"unsigned int", "flags"}, {"struct sockaddr *", "addr"}, {"int", "addr_len"}}},
	{"recvfrom", 1112, 1111, []sysArg{{"int", "fd"}, {"void *", "ubuf"}, {"size_t", "size"}, {"unsigned int", "flags"}, {"struct sockaddr *", "addr"}, {"int *", "addr_len"}}},
	{"shutdown", 1106, 1105, []sysArg{{"int", "fd"}, {"int", "how"}}},
	{"brk", 513, 512, []sysArg{{"unsigned long", "brk"}}},
	{"munmap", 511, 510, []sysArg{{"unsigned long", "addr"}, {"size_t", "len"}}},
	{"clone", 79, 78, []sysArg{{"unsigned long", "clone_flags"}, {"unsigned long", "newsp"}, {"int *", "parent_tidptr"}, {"unsigned long", "tls"}, {"int *", "child_tidptr"}}},
	{"clone3", 77, 76, []sysArg{{"struct clone_args *", "uargs"}, {"size_t", "size"}}},
	{"execve", 642, 641, []sysArg{{"const char *", "filename"}, {"const char *const *", "argv"}, {"const char *const *", "envp"}}},
	{"mmap", 30, 29, []sysArg{{"unsigned long", "addr"}, {"unsigned long", "len"}, {"unsigned long", "prot"}, {"unsigned long", "flags"}, {"unsigned long", "fd"}, {"unsigned long", "off"}}},
	{"accept4", 1124, 1123, []sysArg{{"int", "fd"}, {"struct sockaddr *", "upeer_sockaddr"}, {"int *", "upeer_addrlen"}, {"int", "flags"}}},
	{"wait4", 88, 87, []sysArg{{"pid_t", "upid"}, {"int *", "stat_addr"}, {"int", "options"}, {"struct rusage *", "ru"}}},
	{"kill", 125, 124, []sysArg{{"pid_t", "pid"}, {"int", "sig"}}},
}

// The raw_syscalls records (include/trace/events/syscalls.h) and the
// guest's table.
const (
	rawSysEnterSize = 64 // struct trace_event_raw_sys_enter
	rawSysExitSize  = 24 // struct trace_event_raw_sys_exit
	nrSyscalls      = 451
	sysArgsOff      = 16 // syscall_trace_enter's args, and exit's ret
	sysSymPrefix    = "__arm64_sys_"
)

// rawSyscallDefs are raw_syscalls:sys_enter and sys_exit.
func rawSyscallDefs() []*staticEvent {
	return []*staticEvent{
		{group: "raw_syscalls", name: "sys_exit", id: 23, size: rawSysExitSize,
			fields:   []tpField{{"long", "id", 8, 8, true, false, false}, {"long", "ret", 16, 8, true, false, false}},
			printFmt: `"NR %ld = %ld", REC->id, REC->ret`,
			print: func(w *bytes.Buffer, r record) {
				fmt.Fprintf(w, "NR %d = %d", r.i64(8), r.i64(16))
			}, other: noOther},
		{group: "raw_syscalls", name: "sys_enter", id: 24, size: rawSysEnterSize,
			fields:   []tpField{{"long", "id", 8, 8, true, false, false}, {"unsigned long", "args[6]", 16, 48, false, false, false}},
			printFmt: `"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)", REC->id, REC->args[0], REC->args[1], REC->args[2], REC->args[3], REC->args[4], REC->args[5]`,
			print: func(w *bytes.Buffer, r record) {
				fmt.Fprintf(w, "NR %d (%x, %x, %x, %x, %x, %x)", r.i64(8), r.u64(16), r.u64(24), r.u64(32), r.u64(40), r.u64(48), r.u64(56))
			}, other: noOther},
	}
}

// syscallEventDefs are the syscalls events of the guest's table: for each
// number whose entry is __arm64_sys_<name> with metadata, the enter and
// exit events, keyed by number.
func syscallEventDefs(k *kernel.Kernel) (enter, exit map[int64]*staticEvent) {
	table, ok := k.Kallsyms().LookupName("sys_call_table")
	if !ok {
		return nil, nil
	}
	metas := make(map[string]*syscallMeta, len(syscallMetas))
	for i := range syscallMetas {
		metas[syscallMetas[i].name] = &syscallMetas[i]
	}
	enter, exit = map[int64]*staticEvent{}, map[int64]*staticEvent{}
	for nr := range int64(nrSyscalls) {
		addr, err := k.Read64(table.Addr + uint64(nr)*8)
		if err != nil {
			return nil, nil
		}
		sym, off, ok := k.Kallsyms().LookupAddr(addr)
		if !ok || off != 0 {
			continue
		}
		name, ok := strings.CutPrefix(sym.Name, sysSymPrefix)
		m := metas[name]
		if !ok || m == nil {
			continue // sys_ni_syscall, or no metadata
		}
		enter[nr], exit[nr] = syscallEnterDef(m, nr), syscallExitDef(m, nr)
	}
	return enter, exit
}

// syscallEnterDef is sys_enter_<name>: syscall_enter_define_fields and
// __set_enter_print_fmt.
func syscallEnterDef(m *syscallMeta, nr int64) *staticEvent {
	fields := []tpField{{"int", "__syscall_nr", 8, 4, true, false, false}}
	var pf, args strings.Builder
	pf.WriteByte('"')
	for i, a := range m.args {
		// FILTER_OTHER with a char * type: filter_assign_type's
		// FILTER_PTR_STRING, a string to a filter.
		ptrStr := a.ctype == "char *" || a.ctype == "const char *"
		fields = append(fields, tpField{a.ctype, a.name, sysArgsOff + 8*i, 8, false, false, ptrStr})
		if i > 0 {
			pf.WriteString(", ")
			args.WriteString(", ")
		}
		fmt.Fprintf(&pf, "%s: 0x%%08lx", a.name)
		fmt.Fprintf(&args, "((unsigned long)(REC->%s))", a.name)
	}
	pf.WriteByte('"')
	if len(m.args) > 0 {
		pf.WriteString(", ")
		pf.WriteString(args.String())
	}
	n := len(m.args)
	return &staticEvent{group: "syscalls", name: "sys_enter_" + m.name, id: m.enterID, size: sysArgsOff + 8*n,
		fields: fields, printFmt: pf.String(), other: noOther, bare: true,
		from: func(raw record) record {
			r := make(record, sysArgsOff+8*n)
			copy(r, raw[:traceEntryHeadSize])
			binary.LittleEndian.PutUint32(r[8:], uint32(nr))
			copy(r[sysArgsOff:], raw[sysArgsOff:sysArgsOff+8*n])
			return r
		},
		// print_syscall_enter: with verbose each argument's type
		// before its name.
		printFlags: func(w *bytes.Buffer, r record, flags uint32) {
			w.WriteString("sys_" + m.name + "(")
			for i, a := range m.args {
				if i > 0 {
					w.WriteString(", ")
				}
				if flags&optVerbose != 0 {
					w.WriteString(a.ctype + " ")
				}
				w.WriteString(a.name + ": " + strconv.FormatUint(r.u64(sysArgsOff+8*i), 16))
			}
			w.WriteByte(')')
		}}
}

// syscallExitDef is sys_exit_<name>: syscall_exit_define_fields.
func syscallExitDef(m *syscallMeta, nr int64) *staticEvent {
	return &staticEvent{group: "syscalls", name: "sys_exit_" + m.name, id: m.exitID, size: sysArgsOff + 8,
		fields:   []tpField{{"int", "__syscall_nr", 8, 4, true, false, false}, {"long", "ret", sysArgsOff, 8, true, false, false}},
		printFmt: `"0x%lx", REC->ret`, other: noOther, bare: true,
		from: func(raw record) record {
			r := make(record, sysArgsOff+8)
			copy(r, raw[:traceEntryHeadSize])
			binary.LittleEndian.PutUint32(r[8:], uint32(nr))
			copy(r[sysArgsOff:], raw[16:24])
			return r
		},
		print: func(w *bytes.Buffer, r record) {
			w.WriteString("sys_" + m.name + " -> 0x" + strconv.FormatUint(r.u64(sysArgsOff), 16))
		}}
}
