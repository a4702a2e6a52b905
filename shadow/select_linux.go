//go:build linux && (amd64 || arm64)

package shadow

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/internal/splicectl"
)

// The seal's select(2) (and poll(2): perfsample_linux.go's sealPoll):
// Linux's trace_pipe_raw polls readable only once its CPU's buffer
// reaches buffer_percent, and trace-cmd's recorders (libtracefs's
// tracefs_cpu_write) wait in select for that before they splice. FUSE
// cannot poll, so the host kernel finds the file readable at once: the
// recorder then waits in the splice instead, which returns 0
// when tracing goes off, and the recorder sleeps and selects again; a
// SIGUSR1 that ends the recording there made its next splice a
// non-blocking one that found no full page (EAGAIN), and trace-cmd ends
// such a recorder without reading what is left. So the seal stops a
// sealed process's select whose read set has one of kpemu's files that
// polls (splicectl.PollCmd), and leaves out those not readable yet; if
// none is, it cuts the select's wait to selectQuiet and, when the wait
// ends with nothing ready, runs the select again, as Linux's would go on
// waiting.

// selectQuiet is the longest a select with a file left out waits before
// the seal asks the file again.
const selectQuiet = 10 * time.Millisecond

// sealSelect serves a stopped select or pselect6: ok asks for its exit,
// for x.
func (s *Supervisor) sealSelect(tid int, kind sysKind, st *spliceState, d *seccompData, c *procCaller) (x exitStop, ok bool) {
	nfds, readfds := int(int32(d.Args[0])), d.Args[1]
	if readfds == 0 || nfds <= 0 || nfds > 1<<16 {
		return nil, false
	}
	words := (nfds + 63) / 64
	sets := [3][]byte{} // read, write, except: the caller's, to put back
	for i := range sets {
		if d.Args[1+i] == 0 {
			continue
		}
		sets[i] = make([]byte, 8*words)
		if c.Read(d.Args[1+i], sets[i]) != nil {
			return nil, false
		}
	}
	quiet, ready := s.quietFiles(tid, st, sets[0], nfds)
	if len(quiet) == 0 {
		return nil, false
	}
	entry, err := getRegs(tid)
	if err != nil {
		return nil, false
	}
	rg := *entry
	x2 := selectExit{entry: entry, kind: kind, sets: sets, addrs: [3]uint64{d.Args[1], d.Args[2], d.Args[3]}, timeout: d.Args[4]}
	if !ready {
		// The wait: the caller's, or selectQuiet if that is longer.
		wait, finite := time.Duration(0), d.Args[4] != 0
		if finite {
			if wait, ok = readWait(c, d.Args[4], x2.unit()); !ok {
				return nil, false
			}
			x2.deadline = time.Now().Add(wait)
		}
		if !finite || wait > selectQuiet {
			if cutWait(tid, &rg, 4, selectQuiet, x2.unit()) != nil {
				return nil, false
			}
			x2.cut = true
		}
	}
	if err := setRegs(tid, &rg); err != nil {
		return nil, false
	}
	in := append([]byte(nil), sets[0]...)
	for _, fd := range quiet {
		in[fd/8] &^= 1 << (fd % 8)
	}
	if _, err := unix.PtracePokeData(tid, uintptr(readfds), in); err != nil {
		_ = setRegs(tid, entry) // the select runs as the caller made it
		return nil, false
	}
	s.sealed.Add(1)
	return x2, true
}

// quietFiles are the descriptors of set (a read set of nfds) that are
// kpemu's files that poll and are not readable; ready is whether one of
// them is.
func (s *Supervisor) quietFiles(tid int, st *spliceState, set []byte, nfds int) (quiet []int, ready bool) {
	fp := filePoller{s: s, st: st, tid: tid, pidfd: -1}
	defer fp.close()
	for fd := range nfds {
		if set[fd/8]&(1<<(fd%8)) == 0 {
			continue
		}
		switch fp.ask(fd) {
		case pollReady:
			ready = true
		case pollQuietFile:
			quiet = append(quiet, fd)
		}
	}
	return quiet, ready
}

// filePoller asks the descriptors of one stopped select or poll,
// through a pidfd of the caller's process opened at the first ask.
type filePoller struct {
	s     *Supervisor
	st    *spliceState
	tid   int
	pidfd int // -1 until the first ask
}

// ask is PollCmd of the caller's descriptor fd if it is one of kpemu's
// files; pollOther for any other file, or if the caller's process
// cannot be reached.
func (fp *filePoller) ask(fd int) int {
	if fp.pidfd < 0 {
		pidfd, err := openPidfd(fp.tid)
		if err != nil {
			return pollOther
		}
		fp.pidfd = pidfd
	}
	f, err := unix.PidfdGetfd(fp.pidfd, fd, 0)
	if err != nil {
		return pollOther
	}
	defer unix.Close(f)
	if !fp.st.kpemuFile(fp.s.Seal, f) {
		return pollOther
	}
	switch r, err := ioctl(f, splicectl.PollCmd, nil); {
	case err != nil:
		return pollOther // ENOTTY: FUSE's poll, always readable
	case r == 1:
		return pollReady
	}
	return pollQuietFile
}

func (fp *filePoller) close() {
	if fp.pidfd >= 0 {
		unix.Close(fp.pidfd)
	}
}

// What filePoller.ask finds.
const (
	pollOther     = iota // not one of kpemu's files that poll
	pollReady            // one, readable
	pollQuietFile        // one, not readable
)

// readWait is the wait of the timeval (unit: microseconds) or timespec
// (nanoseconds) at addr; ok false if it cannot be read, or if Linux
// refuses it (EINVAL) or it is longer than anyone waits: the call then
// runs as the caller made it.
func readWait(c *procCaller, addr uint64, unit time.Duration) (wait time.Duration, ok bool) {
	var tv [16]byte
	if c.Read(addr, tv[:]) != nil {
		return 0, false
	}
	sec, frac := binary.LittleEndian.Uint64(tv[:]), binary.LittleEndian.Uint64(tv[8:])
	if sec > 1<<32 || frac >= uint64(time.Second/unit) {
		return 0, false
	}
	return time.Duration(sec)*time.Second + time.Duration(frac)*unit, true
}

// putWait writes wait as a timeval or timespec (unit as readWait's) at
// addr in tid.
func putWait(tid int, addr uint64, wait, unit time.Duration) error {
	var tv [16]byte
	binary.LittleEndian.PutUint64(tv[:], uint64(wait/time.Second))
	binary.LittleEndian.PutUint64(tv[8:], uint64(wait%time.Second/unit))
	_, err := unix.PtracePokeData(tid, uintptr(addr), tv[:])
	return err
}

// cutWait makes argument i of the stopped call rg a wait of quiet (a
// timeval or timespec as readWait's, below the caller's red zone).
func cutWait(tid int, rg *regs, i int, quiet, unit time.Duration) error {
	addr := (rg.sp() - redZone - 16) &^ 15
	if err := putWait(tid, addr, quiet, unit); err != nil {
		return err
	}
	rg.setArg(i, addr)
	return nil
}

// selectExit ends a select that sealSelect changed: its registers and
// the caller's sets go back, and a select whose cut wait ended with
// nothing ready runs again (with the time left, for a finite one).
type selectExit struct {
	entry    *regs
	kind     sysKind
	sets     [3][]byte // the caller's read, write and except sets (nil: none)
	addrs    [3]uint64
	timeout  uint64    // the caller's timeval or timespec, 0 for none
	cut      bool      // the wait was cut to selectQuiet
	deadline time.Time // the caller's wait's end, zero for none
}

// unit is a tick of the timeout's second field: select's timeval counts
// microseconds, pselect6's timespec nanoseconds.
func (x selectExit) unit() time.Duration {
	if x.kind == sysSelect {
		return time.Microsecond
	}
	return time.Nanosecond
}

func (x selectExit) atExit(s *Supervisor, tid int, closing bool) {
	rg, err := getRegs(tid)
	if err != nil {
		return
	}
	ret := rg.ret()
	left, finite := time.Until(x.deadline), !x.deadline.IsZero()
	again := ret == 0 && x.cut && !closing && (!finite || left > 0)
	if ret < 0 || again {
		// Linux's select leaves the sets as they were when it fails; a
		// select that runs again needs them.
		for i, set := range x.sets {
			if set != nil {
				_, _ = unix.PtracePokeData(tid, uintptr(x.addrs[i]), set)
			}
		}
	}
	if x.timeout != 0 && ret >= 0 && finite {
		// Linux writes the time left back (0 when it ran out).
		_ = putWait(tid, x.timeout, max(left, 0), x.unit())
	}
	if again {
		rg.rewind(x.entry)
	} else {
		rg.keepRet(x.entry)
	}
	if err := setRegs(tid, rg); err != nil {
		s.log().Warn("shadow: seal: cannot end a select", "tid", tid, "err", err)
	}
}
