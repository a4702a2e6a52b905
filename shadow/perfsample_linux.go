//go:build linux && (amd64 || arm64)

package shadow

import (
	"encoding/binary"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/internal/procmem"
)

// Sampling perf events (perf record) in sealed processes. Linux's event
// is an fd whose mmap is its ring buffer; the seal makes the
// perf_event_open a memfd_create in the caller instead, which perf maps
// as it would the event, and hands kpemu its own open of that memfd
// (Seal.Perf's SamplePerf), which writes the samples into it. perf's
// ioctls on the fd stop for the seal (the filter stops every ioctl of
// type '$') and are served here; the event ends with its process.
// poll(2) on a memfd always reports it readable, so perf record does
// not sleep between reads as it does on Linux.

// perfIoctlType is the type byte of perf's ioctls (PERF_EVENT_IOC_*).
const perfIoctlType = '$'

// struct perf_event_attr's bit fields (at offset 40) a sampler reads.
const (
	perfAttrComm        = 1 << 9
	perfAttrFreq        = 1 << 10
	perfAttrSampleIDAll = 1 << 18

	perfTypeSoftware = 1 // PERF_TYPE_SOFTWARE
	perfCountSWDummy = 9 // PERF_COUNT_SW_DUMMY
)

// sampleAttr is the sampling event attr asks for, if it is one: a
// sample period, or a frequency (taken as a sample of every hit, which a
// tracepoint's frequency starts with).
func sampleAttr(a PerfAttr, attr []byte) (SampleAttr, bool) {
	u64 := func(off int) uint64 { return binary.LittleEndian.Uint64(attr[off:]) }
	period, bits := u64(16), u64(40)
	if period == 0 {
		return SampleAttr{}, false
	}
	if bits&perfAttrFreq != 0 {
		period = 1
	}
	return SampleAttr{PerfAttr: a, SampleType: u64(24), SamplePeriod: period,
		SampleIDAll: bits&perfAttrSampleIDAll != 0, Comm: bits&perfAttrComm != 0}, true
}

// perfDummy makes a sampling PERF_COUNT_SW_DUMMY one of kpemu's
// sampling events (perfSampler); a counting one goes on to the host.
func (s *Supervisor) perfDummy(tid int, d *seccompData, attr []byte) (exitStop, bool) {
	bits := binary.LittleEndian.Uint64(attr[40:])
	a := PerfAttr{Disabled: bits&perfAttrDisabled != 0, Inherit: bits&perfAttrInherit != 0,
		EnableOnExec: bits&perfAttrEnableOnExec != 0, PID: int(int32(d.Args[1])), CPU: int(int32(d.Args[2]))}
	sa, ok := sampleAttr(a, attr)
	if !ok {
		return nil, false
	}
	sa.Dummy = true
	x, ok, errno := s.perfSampler(tid, sa, d.Args[4])
	if errno == 0 {
		return x, ok
	}
	s.refusePerf(tid, errno)
	return nil, false
}

// perfSampler turns the stopped perf_event_open of sampling event a
// into a memfd_create, whose exit stop (sampleExit) gives the memfd to
// kpemu; or returns the errno the call fails with.
func (s *Supervisor) perfSampler(tid int, a SampleAttr, flags uint64) (exitStop, bool, unix.Errno) {
	if errno := s.Seal.Perf.CheckSample(a); errno != 0 {
		return nil, false, errno
	}
	entry, err := getRegs(tid)
	if err != nil {
		return nil, false, unix.ESRCH
	}
	rg := *entry
	name := []byte("kpemu-perf\x00")
	addr := (rg.sp() - redZone - uint64(len(name))) &^ 15
	if _, err := unix.PtracePokeData(tid, uintptr(addr), name); err != nil {
		return nil, false, unix.EFAULT
	}
	mflags := uint64(0)
	if flags&perfFlagFdCloexec != 0 {
		mflags |= unix.MFD_CLOEXEC
	}
	rg.setSyscall(unix.SYS_MEMFD_CREATE)
	rg.setArg(0, addr)
	rg.setArg(1, mflags)
	if err := setRegs(tid, &rg); err != nil {
		return nil, false, unix.ESRCH
	}
	s.sealed.Add(1)
	return sampleExit{entry: entry, attr: a}, true, 0
}

// sampleExit ends a perf_event_open made a memfd_create: kpemu opens
// the memfd and makes the event, and the tracee gets its registers back
// with the memfd as the result.
type sampleExit struct {
	entry *regs
	attr  SampleAttr
}

func (x sampleExit) atExit(s *Supervisor, tid int, stopping bool) {
	rg, err := getRegs(tid)
	if err != nil {
		return
	}
	rg.keepRet(x.entry)
	if fd := int(rg.ret()); fd >= 0 && !stopping {
		f, err := os.OpenFile("/proc/"+strconv.Itoa(tid)+"/fd/"+strconv.Itoa(fd), os.O_RDWR, 0)
		var smp PerfSampler
		errno := unix.ENOMEM
		if err == nil {
			p := tgid(tid)
			if smp, errno = s.Seal.Perf.SamplePerf(x.attr, f, p); errno == 0 {
				s.samplers.add(p, fd, smp)
			}
		}
		if errno != 0 {
			// The memfd stays open in the tracee: a rare failure
			// (kpemu could not open or map it) leaks a descriptor.
			s.log().Warn("shadow: seal: a sampling perf event failed", "tid", tid, "err", err, "errno", errno)
			rg.setRet(-int64(errno))
		}
	}
	if err := setRegs(tid, rg); err != nil {
		s.log().Warn("shadow: seal: cannot end a sampling perf event's open", "tid", tid, "err", err)
	}
}

// sealIoctl serves perf's ioctl on a sampling event the seal made; any
// other ioctl goes on to its file (a perf counter's is kpemu's FUSE
// file's).
func (s *Supervisor) sealIoctl(tid int, d *seccompData, c *procCaller) {
	if s.samplers.none() {
		return // perf stat's: its counter's FUSE file serves it
	}
	p := tgid(tid)
	fd := int(int32(d.Args[0]))
	smp := s.samplers.get(p, fd)
	if smp == nil {
		return
	}
	cmd, arg := uint32(d.Args[1]), d.Args[2]
	var errno unix.Errno
	switch cmd {
	case unix.PERF_EVENT_IOC_ENABLE:
		smp.Enable(true)
	case unix.PERF_EVENT_IOC_DISABLE:
		smp.Enable(false)
	case unix.PERF_EVENT_IOC_RESET:
		smp.Reset()
	case unix.PERF_EVENT_IOC_REFRESH:
		errno = unix.EINVAL // an overflow count: not served
	case unix.PERF_EVENT_IOC_PERIOD:
		var b [8]byte
		if c.Read(arg, b[:]) != nil {
			errno = unix.EFAULT
			break
		}
		errno = smp.SetPeriod(binary.LittleEndian.Uint64(b[:]))
	case unix.PERF_EVENT_IOC_SET_OUTPUT:
		var to PerfSampler
		if out := int(int32(arg)); out != -1 {
			if to = s.samplers.get(p, out); to == nil {
				errno = unix.EINVAL // not an event, or not one of kpemu's
				break
			}
		}
		errno = smp.SetOutput(to)
	case unix.PERF_EVENT_IOC_SET_FILTER:
		f, err := c.readString(arg)
		if err != nil {
			errno = unix.EFAULT
			break
		}
		errno = smp.SetFilter(f)
	case unix.PERF_EVENT_IOC_ID:
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], smp.ID())
		if _, err := unix.PtracePokeData(tid, uintptr(arg), b[:]); err != nil {
			errno = unix.EFAULT
		}
	case unix.PERF_EVENT_IOC_PAUSE_OUTPUT:
		smp.Pause(arg != 0)
	default:
		errno = unix.ENOTTY
	}
	rg, err := getRegs(tid)
	if err == nil {
		rg.skipSyscall(-int64(errno))
		err = setRegs(tid, rg)
	}
	if err != nil {
		s.log().Warn("shadow: seal: cannot answer a perf ioctl", "tid", tid, "err", err)
		return
	}
	s.sealed.Add(1)
}

// pollQuiet is how long a poll(2) of perf's waits for its rings: a
// memfd is always readable, so the seal has the poll wait without them
// for this long at most (or as long as it asked, if less), and perf
// then reads its rings, as it would after a wakeup.
const pollQuiet = 10 // ms

// sealPoll makes a poll(2) or ppoll(2) wait as on Linux for what FUSE
// and memfds cannot say: a sampling event's fd is readable once its ring
// has records, a kpemu file that polls (trace_pipe_raw) as
// splicectl.PollCmd says. The entries of those not readable poll for
// nothing (events 0) and the wait is at most pollQuiet; their events
// come back at the call's exit stop (pollExit). A wait so cut returns
// its 0 to perf, which reads its rings then anyway; with a kpemu file
// left out the poll runs again, as select's does (select_linux.go).
func (s *Supervisor) sealPoll(tid int, kind sysKind, st *spliceState, d *seccompData, c *procCaller) (exitStop, bool) {
	nfds := d.Args[1]
	if nfds == 0 || nfds > 1<<16 {
		return nil, false
	}
	buf := make([]byte, 8*nfds)
	if c.Read(d.Args[0], buf) != nil {
		return nil, false
	}
	fds := s.samplers.of(tgid(tid))
	var quiet []int
	files, ready := false, false
	fp := filePoller{s: s, st: st, tid: tid, pidfd: -1}
	defer fp.close()
	for i := range int(nfds) {
		// struct pollfd: int fd; short events; short revents
		fd := int(int32(binary.LittleEndian.Uint32(buf[8*i:])))
		if smp := fds[fd]; smp != nil {
			if smp.Pending() {
				ready = true // readable now, as on Linux
			} else {
				quiet = append(quiet, i)
			}
			continue
		}
		if fd < 0 || binary.LittleEndian.Uint16(buf[8*i+4:])&pollIn == 0 {
			continue
		}
		switch fp.ask(fd) {
		case pollReady:
			ready = true
		case pollQuietFile:
			quiet, files = append(quiet, i), true
		}
	}
	if len(quiet) == 0 {
		return nil, false
	}
	entry, err := getRegs(tid)
	if err != nil {
		return nil, false
	}
	rg := *entry
	x := pollExit{entry: entry, kind: kind, fds: d.Args[0], n: int(nfds), quiet: quiet, rerun: files, timeout: d.Args[2]}
	if !ready {
		switch kind {
		case sysPoll:
			ms := int32(d.Args[2])
			if ms >= 0 {
				x.deadline = time.Now().Add(time.Duration(ms) * time.Millisecond)
			}
			if ms < 0 || ms > pollQuiet {
				rg.setArg(2, pollQuiet)
				x.cut = true
			}
		case sysPpoll:
			// A wait of pollQuiet, below the red zone; the kernel writes
			// the time left into it, which the caller never sees.
			wait, finite := time.Duration(0), d.Args[2] != 0
			if finite {
				var ok bool
				if wait, ok = readWait(c, d.Args[2], time.Nanosecond); !ok {
					return nil, false
				}
				x.deadline = time.Now().Add(wait)
			}
			if !finite || wait > pollQuiet*time.Millisecond {
				if cutWait(tid, &rg, 2, pollQuiet*time.Millisecond, time.Nanosecond) != nil {
					return nil, false
				}
				x.cut = true
			}
		}
	}
	if err := setRegs(tid, &rg); err != nil {
		return nil, false
	}
	x.events = make([]uint16, len(quiet))
	for j, i := range quiet {
		x.events[j] = binary.LittleEndian.Uint16(buf[8*i+4:])
		binary.LittleEndian.PutUint16(buf[8*i+4:], 0)
	}
	if _, err := unix.PtracePokeData(tid, uintptr(d.Args[0]), buf); err != nil {
		_ = setRegs(tid, entry) // the poll runs as the caller made it
		return nil, false
	}
	s.sealed.Add(1)
	return x, true
}

// pollExit gives a poll that sealPoll changed its entries' events and
// its registers back, with the poll's result; a poll whose wait was cut
// with a kpemu file left out runs again if nothing was ready and the
// caller's time is not up.
type pollExit struct {
	entry    *regs
	kind     sysKind
	fds      uint64
	n        int
	quiet    []int
	events   []uint16
	timeout  uint64    // poll's milliseconds, ppoll's timespec (0: none)
	rerun    bool      // a kpemu file is among quiet
	cut      bool      // the wait was cut to pollQuiet
	deadline time.Time // the caller's wait's end, zero for none
}

func (x pollExit) atExit(s *Supervisor, tid int, closing bool) {
	c := procCaller{procmem.Reader{PID: tid}}
	defer c.Close()
	buf := make([]byte, 8*x.n)
	if err := c.Read(x.fds, buf); err == nil {
		for j, i := range x.quiet {
			binary.LittleEndian.PutUint16(buf[8*i+4:], x.events[j])
		}
		if _, err := unix.PtracePokeData(tid, uintptr(x.fds), buf); err != nil {
			s.log().Warn("shadow: seal: cannot restore a poll's events", "tid", tid, "err", err)
		}
	}
	rg, err := getRegs(tid)
	if err != nil {
		return
	}
	left, finite := max(time.Until(x.deadline), 0), !x.deadline.IsZero()
	again := x.rerun && x.cut && rg.ret() == 0 && !closing && (!finite || left > 0)
	if x.kind == sysPpoll && x.timeout != 0 && finite && rg.ret() >= 0 {
		// Linux writes the time left back into the caller's timespec.
		_ = putWait(tid, x.timeout, left, time.Nanosecond)
	}
	if again {
		rg.rewind(x.entry)
		if x.kind == sysPoll && finite {
			rg.setArg(2, uint64(max(left.Milliseconds(), 1)))
		}
	} else {
		rg.keepRet(x.entry)
	}
	if err := setRegs(tid, rg); err != nil {
		s.log().Warn("shadow: seal: cannot end a poll", "tid", tid, "err", err)
	}
}
