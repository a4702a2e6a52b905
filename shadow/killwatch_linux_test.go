//go:build linux && (amd64 || arm64)

package shadow

import (
	"encoding/binary"
	"os"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		bad  bool
	}{
		{"0", []int{0}, false},
		{"0-3", []int{0, 1, 2, 3}, false},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}, false},
		{"", nil, true},
		{"3-1", nil, true},
		{"a", nil, true},
	}
	for _, tt := range tests {
		got, err := parseCPUList(tt.in)
		if (err != nil) != tt.bad || !slices.Equal(got, tt.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

func TestKillUnseen(t *testing.T) {
	self := os.Getpid()
	g, err := unix.Getpgid(self)
	if err != nil {
		t.Fatal(err)
	}
	const traced, outside = 1 << 30, 1<<30 + 1 // no such processes: only the set says
	w := &killWatch{tree: &treeSet{}}
	w.tree.add(self)
	w.tree.add(traced)
	esrch := -int64(unix.ESRCH)
	tests := []struct {
		name   string
		caller int
		call   killCall
		ret    int64
		want   bool
	}{
		{"fails", self, killCall{outside, 15}, esrch, true},
		{"to a process outside", self, killCall{outside, 15}, 0, true},
		{"to a traced process: its stop shows it", self, killCall{traced, 15}, 0, false},
		{"signal 0: the caller's stop", self, killCall{outside, 0}, esrch, false},
		{"SIGKILL: the caller's stop", self, killCall{outside, 9}, 0, false},
		{"no signal: the caller's stop", self, killCall{outside, 65}, -int64(unix.EINVAL), false},
		{"a caller outside the tree", outside, killCall{outside, 15}, esrch, false},
		{"its own group, which it is in", self, killCall{0, 15}, 0, false},
		{"a group of the tree", self, killCall{-g, 15}, 0, false},
		{"a group outside the tree", self, killCall{-(1 << 29), 15}, 0, true},
		{"every process but itself, none traced alive", self, killCall{-1, 15}, 0, true},
	}
	for _, tt := range tests {
		if got := w.unseen(tt.caller, tt.call, tt.ret); got != tt.want {
			t.Errorf("%s: unseen = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestKillWatchRead lays samples out in a ring as perf does, one across
// its end, with a lost record between them.
func TestKillWatchRead(t *testing.T) {
	// The ring's header page is a perf_event_mmap_page; its data here
	// is 256 bytes.
	const page, size, start = 2048, 256, 160 // start: the second sample wraps
	w := &killWatch{enterID: 251, exitID: 250, pageSize: page}
	sample := func(pid, tid int, time uint64, id uint16, v1, v2 int64) []byte {
		raw := make([]byte, 32)
		binary.LittleEndian.PutUint16(raw, id)
		binary.LittleEndian.PutUint64(raw[16:], uint64(v1))
		binary.LittleEndian.PutUint64(raw[24:], uint64(v2))
		b := make([]byte, 8, 64)
		b = binary.LittleEndian.AppendUint32(b, uint32(pid))
		b = binary.LittleEndian.AppendUint32(b, uint32(tid))
		b = binary.LittleEndian.AppendUint64(b, time)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(raw)))
		b = append(b, raw...)
		b = append(b, 0, 0, 0, 0) // to 8 bytes
		binary.LittleEndian.PutUint32(b, unix.PERF_RECORD_SAMPLE)
		binary.LittleEndian.PutUint16(b[6:], uint16(len(b)))
		return b
	}
	lost := make([]byte, 24)
	binary.LittleEndian.PutUint32(lost, unix.PERF_RECORD_LOST)
	binary.LittleEndian.PutUint16(lost[6:], 24)
	var stream []byte
	stream = append(stream, sample(7, 8, 100, 251, 1234, 15)...)
	stream = append(stream, lost...)
	stream = append(stream, sample(7, 8, 200, 250, esrchRet(), 0)...)
	big := make([]byte, page+size)
	for i, c := range stream {
		big[page+(start+i)%size] = c
	}
	meta := (*unix.PerfEventMmapPage)(unsafe.Pointer(&big[0]))
	meta.Data_head, meta.Data_tail = start+uint64(len(stream)), start
	got := w.read(big, nil)
	want := []killSample{
		{time: 100, pid: 7, tid: 8, a: 1234, b: 15},
		{time: 200, pid: 7, tid: 8, exit: true, b: esrchRet()},
	}
	if !slices.Equal(got, want) {
		t.Errorf("read = %+v, want %+v", got, want)
	}
	if w.lost.Load() != 1 {
		t.Errorf("lost records %d, want 1", w.lost.Load())
	}
	if tail := meta.Data_tail; tail != start+uint64(len(stream)) {
		t.Errorf("data_tail %d, want %d", tail, start+uint64(len(stream)))
	}
}

func esrchRet() int64 { return -int64(unix.ESRCH) }
