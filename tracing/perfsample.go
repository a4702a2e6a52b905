package tracing

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sampling perf events (perf record), after kernel/events/core.c's
// perf_output_sample and ring_buffer.c: a counter with a sample period
// also writes a PERF_RECORD_SAMPLE of every period'th hit that passes
// its filter into a ring buffer that perf reads in place. Linux's ring
// is the event's mmap; kpemu's is a memfd that the seal made the
// perf_event_open in perf's process (shadow's sealPerf): perf maps it
// as it would the event, and kpemu maps the same file, writes the
// records after the first page and moves data_head in it, as the
// kernel does, reading the data_tail that perf writes back.

// SampleAttr is a sampling perf_event_open(2) of an event.
type SampleAttr struct {
	PerfAttr
	SampleType   uint64 // PERF_SAMPLE_*
	SamplePeriod uint64 // every how many hits a sample is written (>= 1)
	SampleIDAll  bool   // the records other than samples carry the sample's ids
	// Comm: the ring gets a PERF_RECORD_COMM before a task's first
	// sample and when its name changes (perf's tracking event asks);
	// Dummy: PERF_COUNT_SW_DUMMY, a ring and its tracking, no event.
	Comm, Dummy bool
}

// The sample_type bits of include/uapi/linux/perf_event.h.
const (
	sampleIP         = 1 << 0
	sampleTID        = 1 << 1
	sampleTime       = 1 << 2
	sampleAddr       = 1 << 3
	sampleCallchain  = 1 << 5
	sampleID         = 1 << 6
	sampleCPU        = 1 << 7
	samplePeriod     = 1 << 8
	sampleStreamID   = 1 << 9
	sampleRaw        = 1 << 10
	sampleIdentifier = 1 << 16
	samplePhysAddr   = 1 << 19
	sampleCgroup     = 1 << 21
	sampleDataPage   = 1 << 22
	sampleCodePage   = 1 << 23

	// what kpemu writes: the rest (the counts of READ, branch stacks,
	// registers, user stacks, weights, AUX) are not served
	sampleServed = sampleIP | sampleTID | sampleTime | sampleAddr | sampleCallchain |
		sampleID | sampleCPU | samplePeriod | sampleStreamID | sampleRaw | sampleIdentifier |
		samplePhysAddr | sampleCgroup | sampleDataPage | sampleCodePage

	perfRecordLost   = 2
	perfRecordComm   = 3
	perfRecordSample = 9
	perfMiscKernel   = 1
	perfContextKern  = 0xffffffffffffff80 // PERF_CONTEXT_KERNEL

	// struct perf_event_mmap_page
	mmapDataHead   = 1024
	mmapDataTail   = 1032
	mmapDataOffset = 1040
	mmapDataSize   = 1048
)

// sampleRingSize is the size kpemu gives a sampling event's memfd, past
// the largest ring perf maps (its first page and 2^n data pages): the
// file is sparse, and only what perf maps is ever touched.
const sampleRingSize = 1 << 30

// checkSample is what perf_event_open refuses of a sampling event.
func checkSample(a SampleAttr) syscall.Errno {
	switch {
	case a.SamplePeriod == 0:
		return syscall.EINVAL
	case a.SampleType&^sampleServed != 0:
		return syscall.EOPNOTSUPP // nothing to fill them with
	}
	return 0
}

// perfSample is a counter's sampling state.
type perfSample struct {
	attr   SampleAttr
	id     uint64                   // its counter's
	own    *perfRing                // the ring of its memfd
	out    atomic.Pointer[perfRing] // where its records go: its own, or SET_OUTPUT's
	paused atomic.Bool              // PERF_EVENT_IOC_PAUSE_OUTPUT
	period atomic.Uint64            // PERF_EVENT_IOC_PERIOD's, else attr's
	hits   atomic.Uint64            // hits since the last sample
}

// sampleCtx is what a hit's records say of where it happened.
type sampleCtx struct {
	ip        uint64
	pid, tid  int32
	comm      string
	time      uint64
	cpu       uint32
	callchain []uint64 // the kernel stack, innermost first
	raw       []byte   // the event's record, struct trace_entry first
}

// perfRing is one ring buffer: kpemu's mapping of the memfd perf maps.
type perfRing struct {
	mu   sync.Mutex
	file *os.File // kpemu's open of the memfd
	tgid int      // the process that maps it
	ino  uint64
	page int
	mem  []byte // the file mapped, once perf has mapped it
	size uint64 // its data pages' size (a power of two), 0 until then
	// looked is when maps was last read for the mapping, which perf
	// makes before it enables the event: a ring never mapped is looked
	// for at most every ringLookEvery, not at every hit.
	looked time.Time
	lost   uint64 // records dropped since the last PERF_RECORD_LOST
	// track: a tracking event writes here, so each task's name goes in
	// before its samples (comms: the last written, by tid)
	track atomic.Bool
	comms map[int32]string
}

func newPerfRing(f *os.File, tgid int) (*perfRing, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("the ring's memfd: %w", err)
	}
	if st.Size < sampleRingSize {
		if err := f.Truncate(sampleRingSize); err != nil {
			return nil, fmt.Errorf("sizing the ring's memfd: %w", err)
		}
	}
	return &perfRing{file: f, tgid: tgid, ino: st.Ino, page: os.Getpagesize()}, nil
}

// mapped finds perf's mapping of the ring in its process (the kernel
// learns its size at mmap, which kpemu does not see) and maps the same
// pages; r.mu is held. It reports whether the ring can be written.
func (r *perfRing) mapped() bool {
	if r.mem != nil {
		return true
	}
	if r.file == nil || time.Since(r.looked) < ringLookEvery {
		return false
	}
	r.looked = time.Now()
	n := perfMapLen(r.tgid, r.ino)
	if d := n - r.page; d <= 0 || d&(d-1) != 0 {
		return false // not mapped (yet), or not as perf maps a ring
	}
	mem, err := unix.Mmap(int(r.file.Fd()), 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return false
	}
	r.mem, r.size = mem, uint64(n-r.page)
	binary.LittleEndian.PutUint64(mem[mmapDataOffset:], uint64(r.page))
	binary.LittleEndian.PutUint64(mem[mmapDataSize:], r.size)
	return true
}

// ringLookEvery: see perfRing.looked.
const ringLookEvery = 10 * time.Millisecond

// perfMapLen is the length of process tgid's mapping of inode ino at
// offset 0 (a memfd's line in /proc/PID/maps), 0 if there is none.
func perfMapLen(tgid int, ino uint64) int {
	f, err := os.Open("/proc/" + strconv.Itoa(tgid) + "/maps")
	if err != nil {
		return 0
	}
	defer f.Close()
	want := strconv.FormatUint(ino, 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[4] != want || fs[2] != "00000000" || !strings.HasPrefix(fs[5], "/memfd:") {
			continue
		}
		lo, hi, ok := strings.Cut(fs[0], "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil && b > a {
			return int(b - a)
		}
	}
	return 0
}

// word is a pointer to the mapping's u64 at off, for the atomic loads
// and stores perf's side pairs with (smp_load_acquire of data_head,
// smp_store_release of data_tail).
func (r *perfRing) word(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.mem[off])) }

// write is perf_output_begin, copy and end for one record: it goes in
// whole after data_head unless it would overwrite what perf has not
// read (data_tail), and is then counted lost, to be reported by a
// PERF_RECORD_LOST (with s's ids and c's sample id fields) before the
// next record that fits.
func (r *perfRing) write(rec []byte, s *perfSample, c *sampleCtx) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.mapped() {
		r.lost++
		return
	}
	if r.lost > 0 {
		if !r.put(lostRecord(s, r.lost, c)) {
			r.lost++
			return
		}
		r.lost = 0
	}
	if r.track.Load() && r.comms[c.tid] != c.comm {
		if !r.put(commRecord(s, c)) {
			r.lost++
			return
		}
		if r.comms == nil {
			r.comms = map[int32]string{}
		}
		r.comms[c.tid] = c.comm
	}
	if !r.put(rec) {
		r.lost++
	}
}

// put copies rec in at data_head if it fits; r.mu is held.
func (r *perfRing) put(rec []byte) bool {
	head := atomic.LoadUint64(r.word(mmapDataHead))
	tail := atomic.LoadUint64(r.word(mmapDataTail))
	if head-tail+uint64(len(rec)) > r.size {
		return false
	}
	data := r.mem[r.page : r.page+int(r.size)]
	off := head & (r.size - 1)
	n := copy(data[off:], rec)
	copy(data, rec[n:])
	atomic.StoreUint64(r.word(mmapDataHead), head+uint64(len(rec)))
	return true
}

// close unmaps the ring and closes kpemu's open of its memfd.
func (r *perfRing) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem != nil {
		_ = unix.Munmap(r.mem)
		r.mem = nil
	}
	if r.file != nil {
		r.file.Close()
		r.file = nil
	}
}

// perfRecord is a record being built: newRecord writes its header but
// for the size, which done fills in.
type perfRecord []byte

func newRecord(typ uint32, misc uint16) perfRecord {
	b := make(perfRecord, 8, 128)
	binary.LittleEndian.PutUint32(b, typ)
	binary.LittleEndian.PutUint16(b[4:], misc)
	return b
}

func (b perfRecord) u64(v uint64) perfRecord { return binary.LittleEndian.AppendUint64(b, v) }
func (b perfRecord) u32s(x, y uint32) perfRecord {
	return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(b, x), y)
}

func (b perfRecord) done() []byte {
	binary.LittleEndian.PutUint16(b[6:], uint16(len(b)))
	return b
}

// sampleRecord is perf_output_sample: the fields sample_type asks for,
// in the ABI's order.
func (s *perfSample) sampleRecord(c *sampleCtx, period uint64) []byte {
	t := s.attr.SampleType
	b := newRecord(perfRecordSample, perfMiscKernel)
	if t&sampleIdentifier != 0 {
		b = b.u64(s.id)
	}
	if t&sampleIP != 0 {
		b = b.u64(c.ip)
	}
	if t&sampleTID != 0 {
		b = b.u32s(uint32(c.pid), uint32(c.tid))
	}
	if t&sampleTime != 0 {
		b = b.u64(c.time)
	}
	if t&sampleAddr != 0 {
		b = b.u64(0)
	}
	if t&sampleID != 0 {
		b = b.u64(s.id)
	}
	if t&sampleStreamID != 0 {
		b = b.u64(s.id)
	}
	if t&sampleCPU != 0 {
		b = b.u32s(c.cpu, 0)
	}
	if t&samplePeriod != 0 {
		b = b.u64(period)
	}
	if t&sampleCallchain != 0 {
		b = b.u64(uint64(1 + len(c.callchain))).u64(perfContextKern)
		for _, pc := range c.callchain {
			b = b.u64(pc)
		}
	}
	if t&sampleRaw != 0 {
		// perf_trace_buf_alloc: the u32 size and the record end on a
		// u64 boundary, padded with zeros.
		n := (len(c.raw)+4+7)&^7 - 4
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
		b = append(b, c.raw...)
		b = append(b, make([]byte, n-len(c.raw))...)
	}
	if t&samplePhysAddr != 0 {
		b = b.u64(0)
	}
	if t&sampleCgroup != 0 {
		b = b.u64(0)
	}
	if t&sampleDataPage != 0 {
		b = b.u64(0)
	}
	if t&sampleCodePage != 0 {
		b = b.u64(0)
	}
	return b.done()
}

// lostRecord is PERF_RECORD_LOST: the id, the count, then the sample id
// fields (__perf_event__output_id_sample) if sample_id_all asks for
// them.
func lostRecord(s *perfSample, lost uint64, c *sampleCtx) []byte {
	return s.idSample(newRecord(perfRecordLost, 0).u64(s.id).u64(lost), c).done()
}

// commRecord is PERF_RECORD_COMM (perf_event_comm_output): the task's
// pid, tid and name, NUL-padded to a u64 boundary, then the sample id
// fields.
func commRecord(s *perfSample, c *sampleCtx) []byte {
	b := newRecord(perfRecordComm, 0).u32s(uint32(c.pid), uint32(c.tid))
	name := append([]byte(c.comm), make([]byte, 8-len(c.comm)%8)...)
	return s.idSample(append(b, name...), c).done()
}

// idSample appends the sample id fields of a record other than a sample,
// if sample_id_all asks for them.
func (s *perfSample) idSample(b perfRecord, c *sampleCtx) perfRecord {
	if s.attr.SampleIDAll {
		t := s.attr.SampleType
		if t&sampleTID != 0 {
			b = b.u32s(uint32(c.pid), uint32(c.tid))
		}
		if t&sampleTime != 0 {
			b = b.u64(c.time)
		}
		if t&sampleID != 0 {
			b = b.u64(s.id)
		}
		if t&sampleStreamID != 0 {
			b = b.u64(s.id)
		}
		if t&sampleCPU != 0 {
			b = b.u32s(c.cpu, 0)
		}
		if t&sampleIdentifier != 0 {
			b = b.u64(s.id)
		}
	}
	return b
}

// hit counts one hit that passed the counter's filter, and writes a
// sample of every period'th (perf_swevent_overflow with a period): c
// makes the record's context only then.
func (s *perfSample) hit(c func() *sampleCtx) {
	period := s.period.Load()
	if s.hits.Add(1) < period {
		return
	}
	s.hits.Store(0)
	r := s.out.Load()
	if r == nil || s.paused.Load() {
		return
	}
	ctx := c()
	r.write(s.sampleRecord(ctx, period), s, ctx)
}

// CheckSample returns the errno that perf_event_open of the sampling
// event a fails with (OpenSample's), 0 if it would not.
func (t *Tracing) CheckSample(a SampleAttr) syscall.Errno {
	if a.Dummy {
		if a.PID < -1 || a.CPU < -1 || a.PID == -1 && a.CPU == -1 {
			return syscall.EINVAL
		}
	} else if errno := t.checkPerf(a.PerfAttr); errno != 0 {
		return errno
	}
	return checkSample(a)
}

// PerfSampler is a sampling perf event, as the seal serves its ioctls.
type PerfSampler struct{ pc *perfCounter }

// OpenSample makes a sampling event of a whose ring is the memfd ring
// (kpemu's own open of it, which the sampler then owns), mapped by
// process tgid; it returns perf_event_open's errno on failure.
func (t *Tracing) OpenSample(a SampleAttr, ring *os.File, tgid int) (*PerfSampler, syscall.Errno) {
	if errno := t.CheckSample(a); errno != 0 {
		return nil, errno
	}
	r, err := newPerfRing(ring, tgid)
	if err != nil {
		t.log.Warn("tracing: a perf ring", "err", err)
		return nil, syscall.ENOMEM
	}
	r.track.Store(a.Comm)
	sample := &perfSample{attr: a, own: r}
	sample.period.Store(a.SamplePeriod)
	sample.out.Store(r)
	t.mu.Lock()
	defer t.mu.Unlock()
	var ev *event
	if !a.Dummy {
		if ev = t.eventByID(int(a.Config)); ev == nil {
			r.close()
			return nil, syscall.EINVAL // removed meanwhile
		}
	}
	pc, err := t.newPerfCounter(ev, a.PerfAttr, sample)
	if err != nil {
		r.close()
		return nil, syscall.EINVAL
	}
	return &PerfSampler{pc}, 0
}

// ID is PERF_EVENT_IOC_ID's.
func (s *PerfSampler) ID() uint64 { return s.pc.id }

// Enable is PERF_EVENT_IOC_ENABLE (on) and DISABLE.
func (s *PerfSampler) Enable(on bool) {
	if on {
		s.pc.enable()
	} else {
		s.pc.disable()
	}
}

// Reset is PERF_EVENT_IOC_RESET.
func (s *PerfSampler) Reset() { s.pc.count.Store(0) }

// SetPeriod is PERF_EVENT_IOC_PERIOD: EINVAL for 0.
func (s *PerfSampler) SetPeriod(p uint64) syscall.Errno {
	if p == 0 {
		return syscall.EINVAL
	}
	s.pc.sample.period.Store(p)
	return 0
}

// Pause is PERF_EVENT_IOC_PAUSE_OUTPUT.
func (s *PerfSampler) Pause(on bool) { s.pc.sample.paused.Store(on) }

// SetFilter is PERF_EVENT_IOC_SET_FILTER (setFilter).
func (s *PerfSampler) SetFilter(f string) syscall.Errno {
	if err := s.pc.setFilter(f); err != nil {
		var en syscall.Errno
		if errors.As(err, &en) {
			return en
		}
		return syscall.EINVAL
	}
	return 0
}

// SetOutput is PERF_EVENT_IOC_SET_OUTPUT (perf_event_set_output): the
// event's records go to to's ring (nil: its own). As Linux, an event
// whose own ring is mapped cannot be redirected (EBUSY), and the two
// must be of one CPU, or one task.
func (s *PerfSampler) SetOutput(to *PerfSampler) syscall.Errno {
	sm := s.pc.sample
	if to == nil {
		sm.out.Store(sm.own)
		return 0
	}
	if to == s {
		return 0
	}
	a, b := s.pc.attr, to.pc.attr
	if a.CPU != b.CPU || a.CPU == -1 && a.PID != b.PID {
		return syscall.EINVAL
	}
	sm.own.mu.Lock()
	busy := sm.own.mapped()
	sm.own.mu.Unlock()
	if busy {
		return syscall.EBUSY
	}
	if sm.attr.Comm {
		to.pc.sample.own.track.Store(true)
	}
	sm.out.Store(to.pc.sample.own)
	return 0
}

// Close is the event's last close (perf's process ended): it stops
// sampling and releases the event and the ring.
func (s *PerfSampler) Close() {
	if s.pc.ev != nil {
		s.pc.Release()
	}
	s.pc.sample.own.close()
}

// Pending reports whether the event's own ring holds records perf has
// not read (its fd is readable on Linux).
func (s *PerfSampler) Pending() bool {
	r := s.pc.sample.own
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		return false
	}
	return atomic.LoadUint64(r.word(mmapDataHead)) != atomic.LoadUint64(r.word(mmapDataTail))
}
