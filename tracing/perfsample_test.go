package tracing_test

import (
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/tracing"
)

// perfRing is the test's side of a sampling event's ring: perf's. It
// makes the memfd, maps it as perf would (a page and dataPages), and
// hands kpemu its own open.
type perfRing struct {
	mem  []byte
	page int
	fd   int
}

func newTestRing(t *testing.T) (*perfRing, *os.File) {
	t.Helper()
	fd, err := unix.MemfdCreate("kpemu-perf", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	kp, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(fd), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	// kpemu sizes the file; perf maps it after the open
	r := &perfRing{page: page, fd: fd}
	return r, kp
}

// mmap maps the ring as perf does once perf_event_open returned.
func (r *perfRing) mmap(t *testing.T, dataPages int) {
	t.Helper()
	mem, err := unix.Mmap(r.fd, 0, r.page*(1+dataPages), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Munmap(mem) })
	r.mem = mem
}

func (r *perfRing) word(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.mem[off])) }

// records reads what kpemu wrote since data_tail and moves data_tail
// past it, as perf_mmap__consume does: each record's type and body.
func (r *perfRing) records() (recs [][]byte) {
	head := atomic.LoadUint64(r.word(1024))
	tail := atomic.LoadUint64(r.word(1032))
	size := uint64(len(r.mem) - r.page)
	data := r.mem[r.page:]
	get := func(at uint64, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = data[(at+uint64(i))&(size-1)]
		}
		return b
	}
	for tail < head {
		h := get(tail, 8)
		n := int(binary.LittleEndian.Uint16(h[6:]))
		recs = append(recs, get(tail, n))
		tail += uint64(n)
	}
	atomic.StoreUint64(r.word(1032), tail)
	return recs
}

const (
	sampleIP, sampleTID, sampleTime, sampleCPU, samplePeriod, sampleRaw, sampleIdentifier = 1, 2, 4, 0x80, 0x100, 0x400, 0x10000
	perfRecordLost, perfRecordComm, perfRecordSample                                      = 2, 3, 9
)

// A sampling event writes a PERF_RECORD_SAMPLE of each hit into the
// ring perf maps, laid out as perf_output_sample lays it out, with a
// PERF_RECORD_COMM before a task's first sample when it tracks; a ring
// that perf does not read fast enough loses records and says how many
// in a PERF_RECORD_LOST.
func TestPerfSampleRecords(t *testing.T) {
	f, id := perfFixture(t)
	ring, kpFile := newTestRing(t)
	const st = sampleIdentifier | sampleIP | sampleTID | sampleTime | sampleCPU | samplePeriod | sampleRaw
	a := tracing.SampleAttr{PerfAttr: tracing.PerfAttr{Config: uint64(id), PID: -1, CPU: 0},
		SampleType: st, SamplePeriod: 1, SampleIDAll: true, Comm: true}
	s, errno := f.tr.OpenSample(a, kpFile, os.Getpid())
	if errno != 0 {
		t.Fatalf("OpenSample: %v", errno)
	}
	defer s.Close()
	ring.mmap(t, 1) // one data page: it fills
	f.step(t, 3_000_000)
	recs := ring.records()
	var samples, comms int
	for _, r := range recs {
		switch typ := binary.LittleEndian.Uint32(r); typ {
		case perfRecordComm:
			comms++
			if comms == 1 && samples != 0 {
				t.Errorf("a sample before the first PERF_RECORD_COMM")
			}
		case perfRecordSample:
			samples++
			body := r[8:]
			if got := binary.LittleEndian.Uint64(body); got != s.ID() {
				t.Errorf("IDENTIFIER %d, want %d", got, s.ID())
			}
			ip := binary.LittleEndian.Uint64(body[8:])
			if sym := f.k.Kallsyms().Format(ip); !strings.HasPrefix(sym, "vfs_read+0x0") {
				t.Errorf("IP %#x (%s), want vfs_read+0x0", ip, sym)
			}
			// TID(8) TIME(8) CPU(8) PERIOD(8), then RAW
			if p := binary.LittleEndian.Uint64(body[40:]); p != 1 {
				t.Errorf("PERIOD %d, want 1", p)
			}
			n := int(binary.LittleEndian.Uint32(body[48:]))
			raw := body[52:]
			if (n+4)%8 != 0 || len(raw) != n {
				t.Errorf("RAW of %d bytes in %d: not u64-aligned with its size", n, len(raw))
			} else if typ := binary.LittleEndian.Uint16(raw); int(typ) != id {
				t.Errorf("RAW's common_type %d, want %d", typ, id)
			}
		default:
			t.Errorf("record type %d", typ)
		}
	}
	if samples == 0 || comms == 0 {
		t.Fatalf("%d samples and %d comms in %d records", samples, comms, len(recs))
	}
	// Nothing read meanwhile: one data page holds few samples, the rest
	// are lost, and the first record after a read says how many.
	f.step(t, 20_000_000)
	_ = ring.records() // frees the page
	f.step(t, 3_000_000)
	recs = ring.records()
	if len(recs) == 0 || binary.LittleEndian.Uint32(recs[0]) != perfRecordLost {
		t.Fatalf("no PERF_RECORD_LOST first after the ring filled: %d records", len(recs))
	}
	if lost := binary.LittleEndian.Uint64(recs[0][16:]); lost == 0 {
		t.Errorf("PERF_RECORD_LOST of 0 records")
	}
}

// SET_OUTPUT sends an event's samples to another's ring, as perf record
// shares one ring per CPU among its events; an event whose own ring is
// mapped cannot be redirected, nor to an event of another CPU.
func TestPerfSampleSetOutput(t *testing.T) {
	f, id := perfFixture(t)
	ring, kpFile := newTestRing(t)
	_, kpFile2 := newTestRing(t)
	a := tracing.SampleAttr{PerfAttr: tracing.PerfAttr{Config: uint64(id), PID: -1, CPU: 0}, SampleType: sampleIdentifier, SamplePeriod: 1}
	dummy := a
	dummy.Config, dummy.Dummy, dummy.Comm = 0, true, true
	first, errno := f.tr.OpenSample(dummy, kpFile, os.Getpid())
	if errno != 0 {
		t.Fatalf("OpenSample(dummy): %v", errno)
	}
	defer first.Close()
	second, errno := f.tr.OpenSample(a, kpFile2, os.Getpid())
	if errno != 0 {
		t.Fatalf("OpenSample: %v", errno)
	}
	defer second.Close()
	ring.mmap(t, 4)
	if errno := first.SetOutput(second); errno != syscall.EBUSY {
		t.Errorf("redirecting a mapped ring: %v, want EBUSY", errno)
	}
	if errno := second.SetOutput(first); errno != 0 {
		t.Fatalf("SET_OUTPUT: %v", errno)
	}
	f.step(t, 3_000_000)
	var samples int
	for _, r := range ring.records() {
		if binary.LittleEndian.Uint32(r) == perfRecordSample {
			samples++
			if got := binary.LittleEndian.Uint64(r[8:]); got != second.ID() {
				t.Errorf("a sample of id %d in the shared ring, want %d", got, second.ID())
			}
		}
	}
	if samples == 0 {
		t.Error("no sample reached the ring SET_OUTPUT named")
	}
	other := a
	other.CPU = 1
	_, kpFile3 := newTestRing(t)
	third, errno := f.tr.OpenSample(other, kpFile3, os.Getpid())
	if errno != 0 {
		t.Fatalf("OpenSample(CPU 1): %v", errno)
	}
	defer third.Close()
	if errno := third.SetOutput(first); errno != syscall.EINVAL {
		t.Errorf("SET_OUTPUT across CPUs: %v, want EINVAL", errno)
	}
}

func TestPerfSampleErrors(t *testing.T) {
	f, id := perfFixture(t)
	for _, tt := range []struct {
		name string
		a    tracing.SampleAttr
		want syscall.Errno
	}{
		{"no period", tracing.SampleAttr{PerfAttr: tracing.PerfAttr{Config: uint64(id), PID: -1, CPU: 0}}, syscall.EINVAL},
		{"branch stack", tracing.SampleAttr{PerfAttr: tracing.PerfAttr{Config: uint64(id), PID: -1, CPU: 0}, SamplePeriod: 1, SampleType: 1 << 11}, syscall.EOPNOTSUPP},
		{"no such event", tracing.SampleAttr{PerfAttr: tracing.PerfAttr{Config: 99999, PID: -1, CPU: 0}, SamplePeriod: 1}, syscall.EINVAL},
		{"dummy on any CPU and task", tracing.SampleAttr{PerfAttr: tracing.PerfAttr{PID: -1, CPU: -1}, SamplePeriod: 1, Dummy: true}, syscall.EINVAL},
	} {
		if got := f.tr.CheckSample(tt.a); got != tt.want {
			t.Errorf("%s: CheckSample = %v, want %v", tt.name, got, tt.want)
		}
	}
}
