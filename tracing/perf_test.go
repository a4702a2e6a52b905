package tracing_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/tracing"
)

// perfOpen readies a counter of attr for thread tid and opens it, as the
// seal's perf_event_open does.
func perfOpen(t *testing.T, f *fixture, tid int, attr tracing.PerfAttr) *debugfs.Handle {
	t.Helper()
	if errno := f.tr.PreparePerf(tid, attr); errno != 0 {
		t.Fatalf("PreparePerf(%+v) = %v", attr, errno)
	}
	ctx := debugfs.WithCaller(context.Background(), debugfs.Caller{Pid: tid})
	h, err := f.tree.Open(ctx, "kpemu/perf_event", os.O_RDWR)
	if err != nil {
		t.Fatalf("opening the counter: %v", err)
	}
	return h
}

// perfRead is one read(2) of a counter: its u64s.
func perfRead(t *testing.T, h *debugfs.Handle, n int) []uint64 {
	t.Helper()
	b := make([]byte, 8*n)
	got, err := h.Read(context.Background(), b, 0)
	if err != nil || got != len(b) {
		t.Fatalf("read = %d, %v; want %d bytes", got, err, len(b))
	}
	v := make([]uint64, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return v
}

func perfFixture(t *testing.T) (*fixture, int) {
	f := setup(t)
	if _, err := f.tree.MkdirAll("kpemu", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tree.CreateFile("kpemu/perf_event", 0o600, f.tr.PerfEventOps()); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/kprobe_events", "p:vr vfs_read\n", false); err != nil {
		t.Fatal(err)
	}
	id, err := strconv.Atoi(strings.TrimSpace(f.read(t, "tracing/events/kprobes/vr/id")))
	if err != nil {
		t.Fatal(err)
	}
	return f, id
}

func TestPerfPrepareErrors(t *testing.T) {
	f, id := perfFixture(t)
	for _, tt := range []struct {
		name string
		attr tracing.PerfAttr
		want syscall.Errno
	}{
		{"no such id", tracing.PerfAttr{Config: 99999, PID: -1, CPU: 0}, syscall.EINVAL},
		{"any process on any CPU", tracing.PerfAttr{Config: uint64(id), PID: -1, CPU: -1}, syscall.EINVAL},
		{"bad pid", tracing.PerfAttr{Config: uint64(id), PID: -2, CPU: 0}, syscall.EINVAL},
		{"group read", tracing.PerfAttr{Config: uint64(id), PID: -1, CPU: 0, ReadFormat: 1 << 3}, syscall.EOPNOTSUPP},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.tr.PreparePerf(7, tt.attr); got != tt.want {
				t.Errorf("PreparePerf = %v, want %v", got, tt.want)
			}
		})
	}
	// An open that nothing readied is not a counter.
	ctx := debugfs.WithCaller(context.Background(), debugfs.Caller{Pid: 8})
	if _, err := f.tree.Open(ctx, "kpemu/perf_event", os.O_RDWR); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("open without PreparePerf: %v, want ENOENT", err)
	}
}

// A counter arms its event, counts the guest's hits while enabled, and
// answers perf's ioctls; its event cannot be removed until it is closed.
func TestPerfCounterCounts(t *testing.T) {
	f, id := perfFixture(t)
	const readFormat = 1 | 2 | 4 // TOTAL_TIME_ENABLED, TOTAL_TIME_RUNNING, ID
	h := perfOpen(t, f, 100, tracing.PerfAttr{Config: uint64(id), PID: -1, CPU: 0, ReadFormat: readFormat, Disabled: true})
	if v := perfRead(t, h, 4); v[0] != 0 {
		t.Fatalf("a disabled counter counted %d", v[0])
	}
	if !strings.Contains(f.read(t, "kprobes/list"), "vfs_read+0x0    \n") {
		t.Errorf("the counter did not arm its probe:\n%s", f.read(t, "kprobes/list"))
	}
	ioctl := func(cmd uint32, arg uint64, out []byte) error {
		_, err := h.Ioctl(context.Background(), cmd, arg, out)
		return err
	}
	if err := ioctl(0x2400, 0, nil); err != nil { // PERF_EVENT_IOC_ENABLE
		t.Fatal(err)
	}
	f.step(t, 3_000_000)
	v := perfRead(t, h, 4)
	if v[0] == 0 || v[1] == 0 || v[1] != v[2] {
		t.Errorf("after the guest ran: count %d, enabled %d, running %d", v[0], v[1], v[2])
	}
	idOut := make([]byte, 8)
	if err := ioctl(0x80082407, 0, idOut); err != nil || binary.LittleEndian.Uint64(idOut) != v[3] {
		t.Errorf("PERF_EVENT_IOC_ID = %d, %v; read's id %d", binary.LittleEndian.Uint64(idOut), err, v[3])
	}
	if err := ioctl(0x2401, 0, nil); err != nil { // DISABLE
		t.Fatal(err)
	}
	n := perfRead(t, h, 4)[0]
	f.step(t, 1_000_000)
	if got := perfRead(t, h, 4)[0]; got != n {
		t.Errorf("a disabled counter went from %d to %d", n, got)
	}
	if err := ioctl(0x2403, 0, nil); err != nil || perfRead(t, h, 4)[0] != 0 { // RESET
		t.Errorf("after RESET: %v, count %d", err, perfRead(t, h, 4)[0])
	}
	for _, tt := range []struct {
		cmd  uint32
		arg  uint64
		want error
	}{
		{0x2405, 0xffffffff, nil},       // SET_OUTPUT -1
		{0x2405, 3, syscall.EINVAL},     // SET_OUTPUT to a ring buffer
		{0x2402, 1, syscall.EINVAL},     // REFRESH: sampling only
		{0x40082406, 0, syscall.EFAULT}, // SET_FILTER from no caller's memory
		{0x1234, 0, syscall.ENOTTY},     // not perf's
	} {
		if err := ioctl(tt.cmd, tt.arg, nil); !errors.Is(err, tt.want) && (err != nil || tt.want != nil) {
			t.Errorf("ioctl %#x(%d) = %v, want %v", tt.cmd, tt.arg, err, tt.want)
		}
	}
	if err := f.write("tracing/kprobe_events", "-:vr\n", false); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("removing a counted event: %v, want EBUSY", err)
	}
	if _, err := h.Read(context.Background(), make([]byte, 8), 0); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("a read too short for read_format: %v, want ENOSPC", err)
	}
	h.Release()
	if err := f.write("tracing/kprobe_events", "-:vr\n", false); err != nil {
		t.Errorf("removing the event once its counter closed: %v", err)
	}
}

// A counter of a process counts its hits only (CPU -1, as perf stat
// CMD opens it).
func TestPerfCounterOfProcess(t *testing.T) {
	f, id := perfFixture(t)
	const noSuchPid = 30000
	h := perfOpen(t, f, 101, tracing.PerfAttr{Config: uint64(id), PID: noSuchPid, CPU: -1, Inherit: true})
	all := perfOpen(t, f, 102, tracing.PerfAttr{Config: uint64(id), PID: -1, CPU: 0})
	f.step(t, 3_000_000)
	if got := perfRead(t, all, 1)[0]; got == 0 {
		t.Fatal("the system-wide counter counted nothing")
	}
	if got := perfRead(t, h, 1)[0]; got != 0 {
		t.Errorf("the counter of pid %d (no such process) counted %d", noSuchPid, got)
	}
	h.Release()
	all.Release()
}

// PERF_EVENT_IOC_SET_FILTER reads the filter from its caller's memory
// and then counts only the hits that pass it (perf stat --filter,
// perf-tools' perf-stat-hist); a filter that does not parse is Linux's
// errno and leaves the counter's filter as it was.
func TestPerfCounterFilter(t *testing.T) {
	f, id := perfFixture(t)
	self := os.Getpid() // the filter strings are in this process's memory
	attr := tracing.PerfAttr{Config: uint64(id), PID: -1, CPU: 0}
	all := perfOpen(t, f, self, attr)
	none := perfOpen(t, f, self, attr)
	pass := perfOpen(t, f, self, attr)
	setFilter := func(h *debugfs.Handle, s []byte) error {
		ctx := debugfs.WithCaller(context.Background(), debugfs.Caller{Pid: self})
		_, err := h.Ioctl(ctx, 0x40082406, uint64(uintptr(unsafe.Pointer(&s[0]))), nil)
		return err
	}
	for _, tt := range []struct {
		name   string
		h      *debugfs.Handle
		filter []byte
		want   error
	}{
		{"never passes", none, []byte("common_pid == 99999\x00"), nil},
		{"always passes", pass, []byte("common_pid != 99999 && comm != \"nosuch\"\x00"), nil},
		{"no such field", none, []byte("nosuchfield == 1\x00"), syscall.EINVAL},
		{"no NUL within a page", none, []byte(strings.Repeat("x", 5000)), syscall.EINVAL},
	} {
		if err := setFilter(tt.h, tt.filter); !errors.Is(err, tt.want) && (err != nil || tt.want != nil) {
			t.Errorf("%s: SET_FILTER = %v, want %v", tt.name, err, tt.want)
		}
	}
	ctx := debugfs.WithCaller(context.Background(), debugfs.Caller{Pid: self})
	if _, err := none.Ioctl(ctx, 0x40082406, 8, nil); !errors.Is(err, syscall.EFAULT) {
		t.Errorf("SET_FILTER at an unmapped address = %v, want EFAULT", err)
	}
	f.step(t, 3_000_000)
	n, p, a := perfRead(t, none, 1)[0], perfRead(t, pass, 1)[0], perfRead(t, all, 1)[0]
	if a == 0 || n != 0 || p != a {
		t.Errorf("counts: unfiltered %d, filtered to no pid %d (want 0), filtered to every pid %d (want %d)", a, n, p, a)
	}
	for _, h := range []*debugfs.Handle{all, none, pass} {
		h.Release()
	}
}
