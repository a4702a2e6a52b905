package gdbstub

import (
	"bytes"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// Error replies. GDB shows only that a packet failed; the numbers follow
// gdbserver's habit of errno-like values.
const (
	replyOK      = "OK"
	errMalformed = "E01" // the packet did not parse
	errBadThread = "E02" // no such thread
	errBadReg    = "E03" // no such register, or a value of the wrong length
	errTarget    = "E04" // the target refused (breakpoint or watchpoint slot, ...)
	errMemory    = "E14" // EFAULT: the memory access failed
)

// actKind is what the session does after handling a packet.
type actKind int

const (
	actReply  actKind = iota // send reply (which may be empty: "unsupported")
	actResume                // run the guest; step >= 0 steps that CPU
	actDetach                // send reply, drop breakpoints, end the session
	actKill                  // end the session without a reply
	actNone                  // send nothing
)

type action struct {
	kind  actKind
	reply []byte
	step  int // actResume: the CPU to step, or -1 to continue
}

func reply(s string) action { return action{kind: actReply, reply: []byte(s)} }

// bpKey identifies a breakpoint GDB inserted: its type (0 software, 1
// hardware) and address.
type bpKey struct {
	typ  byte
	addr uint64
}

type wpKey struct {
	addr, length uint64
	kind         WatchKind
}

// session is the protocol state of one attached debugger. Its methods run
// on Serve's goroutine while the guest is halted.
type session struct {
	t   Target
	log *slog.Logger
	n   int // NumCPUs

	swbreak bool // GDB understands the swbreak stop reason
	hwbreak bool // GDB understands the hwbreak stop reason

	gCPU int // CPU for register and memory packets (Hg)
	cCPU int // CPU for c/s packets (Hc), or -1 for "all"

	stop   StopEvent // the last stop
	signal int       // the signal reported for it
	exited bool      // the guest powered off while the debugger watched

	bps map[bpKey]bool
	// hostBPs counts the GDB breakpoints at each address, since Z0 and Z1
	// at one address share one host breakpoint.
	hostBPs map[uint64]int
	wps     map[wpKey]bool
}

// Signals reported in stop replies (GDB's numbering, which is Linux's for
// these).
const (
	sigINT  = 2
	sigTRAP = 5
	sigABRT = 6
)

func newSession(t Target, log *slog.Logger, halt StopEvent) *session {
	s := &session{
		t:       t,
		log:     log,
		n:       t.NumCPUs(),
		cCPU:    -1,
		bps:     make(map[bpKey]bool),
		hostBPs: make(map[uint64]int),
		wps:     make(map[wpKey]bool),
	}
	// The guest was halted for the debugger, not by a fault: report it as
	// a trap, as QEMU does on attach, and let the state be inspected even
	// if the guest already powered off.
	if halt.Reason == StopInterrupted || halt.Reason == StopPoweredOff {
		halt.Reason = StopStep
	}
	s.stopped(halt)
	return s
}

// stopped records a stop and returns its stop reply.
func (s *session) stopped(ev StopEvent) []byte {
	if ev.CPU < 0 || ev.CPU >= s.n || !s.t.CPUInfo(ev.CPU).PoweredOn {
		// An interrupt reports the CPU the scheduler looked at last, which
		// may be powered off; GDB would show that thread at PC 0. Report
		// a CPU that runs.
		ev.CPU = s.firstOn()
	}
	s.stop = ev
	s.gCPU = ev.CPU
	s.cCPU = -1
	switch ev.Reason {
	case StopInterrupted:
		s.signal = sigINT
	case StopError:
		s.signal = sigABRT
	case StopPoweredOff:
		s.exited = true
	default:
		s.signal = sigTRAP
	}
	return s.stopReply()
}

// firstOn returns the first powered-on CPU, or 0 if none is.
func (s *session) firstOn() int {
	for i := 0; i < s.n; i++ {
		if s.t.CPUInfo(i).PoweredOn {
			return i
		}
	}
	return 0
}

// stopReply is the reply to '?' and to a resumption that ended.
func (s *session) stopReply() []byte {
	if s.exited {
		return []byte("W00")
	}
	ev := s.stop
	r := fmt.Sprintf("T%02xthread:%x;", s.signal, ev.CPU+1)
	switch ev.Reason {
	case StopBreakpoint:
		if pc, err := s.t.ReadReg(ev.CPU, RegPC); err == nil {
			switch {
			case s.swbreak && s.bps[bpKey{0, pc}]:
				r += "swbreak:;"
			case s.hwbreak && s.bps[bpKey{1, pc}]:
				r += "hwbreak:;"
			}
		}
	case StopWatchpoint:
		r += s.watchReason(ev) + ":" + strconv.FormatUint(ev.Addr, 16) + ";"
	}
	return []byte(r)
}

// watchReason names the kind of watchpoint that fired. The machine says
// only whether the access wrote; GDB wants the kind it inserted.
func (s *session) watchReason(ev StopEvent) string {
	want := WatchRead
	if ev.Write {
		want = WatchWrite
	}
	access := false
	for k := range s.wps {
		if ev.Addr < k.addr || ev.Addr-k.addr >= k.length {
			continue
		}
		if k.kind == want {
			if want == WatchWrite {
				return "watch"
			}
			return "rwatch"
		}
		if k.kind == WatchAccess {
			access = true
		}
	}
	if access || !ev.Write {
		return "awatch"
	}
	return "watch"
}

// handle executes one packet.
func (s *session) handle(pkt []byte) action {
	if len(pkt) == 0 {
		return reply("")
	}
	arg := string(pkt[1:])
	switch pkt[0] {
	case '?':
		return action{kind: actReply, reply: s.stopReply()}
	case 'g':
		return s.readRegs()
	case 'G':
		return s.writeRegs(arg)
	case 'p':
		return s.readReg(arg)
	case 'P':
		return s.writeReg(arg)
	case 'm':
		return s.readMem(arg)
	case 'M':
		return s.writeMem(arg)
	case 'X':
		return s.writeMemBinary(pkt[1:])
	case 'H':
		return s.setThread(arg)
	case 'T':
		if _, ok := s.thread(arg, false); !ok {
			return reply(errBadThread)
		}
		return reply(replyOK)
	case 'c', 's':
		return s.resumeLegacy(pkt[0], arg, false)
	case 'C', 'S':
		return s.resumeLegacy(pkt[0]+'a'-'A', arg, true)
	case 'Z', 'z':
		return s.breakpoint(pkt[0] == 'Z', arg)
	case 'D':
		return action{kind: actDetach, reply: []byte(replyOK)}
	case 'k':
		return action{kind: actKill}
	case 'q':
		return s.query(arg)
	case 'Q':
		if arg == "StartNoAckMode" {
			// The reply is still acknowledged; the caller switches modes
			// after sending it.
			return reply(replyOK)
		}
	case 'v':
		return s.vPacket(arg)
	}
	return reply("")
}

func (s *session) readRegs() action {
	out := make([]byte, 0, 2*gSize())
	for r := Reg(0); r < numRegs; r++ {
		v, err := s.t.ReadReg(s.gCPU, r)
		if err != nil {
			s.log.Debug("gdbstub: reading register", "reg", r, "err", err)
			return reply(errBadReg)
		}
		out = appendRegHex(out, v, r.size())
	}
	return action{kind: actReply, reply: out}
}

func (s *session) writeRegs(arg string) action {
	p, err := decodeHex(arg)
	if err != nil || len(p) != gSize() {
		return reply(errMalformed)
	}
	// Only changed registers are written: sp, sp_el0/sp_el1 and currentel
	// alias one another, and writing back a stale alias would undo the
	// change GDB made to the other.
	for r := Reg(0); r < numRegs; r++ {
		n := r.size()
		v := regFromBytes(p[:n])
		p = p[n:]
		if old, err := s.t.ReadReg(s.gCPU, r); err == nil && old == v {
			continue
		}
		if err := s.t.WriteReg(s.gCPU, r, v); err != nil {
			s.log.Debug("gdbstub: writing register", "reg", r, "err", err)
			return reply(errBadReg)
		}
	}
	return reply(replyOK)
}

func (s *session) readReg(arg string) action {
	n, err := parseHex(arg)
	if err != nil {
		return reply(errMalformed)
	}
	if n >= uint64(numRegs) {
		return reply(errBadReg)
	}
	r := Reg(n)
	v, err := s.t.ReadReg(s.gCPU, r)
	if err != nil {
		return reply(errBadReg)
	}
	return action{kind: actReply, reply: appendRegHex(nil, v, r.size())}
}

func (s *session) writeReg(arg string) action {
	num, val, ok := strings.Cut(arg, "=")
	if !ok {
		return reply(errMalformed)
	}
	n, err := parseHex(num)
	if err != nil {
		return reply(errMalformed)
	}
	p, err := decodeHex(val)
	if err != nil {
		return reply(errMalformed)
	}
	if n >= uint64(numRegs) || len(p) != Reg(n).size() {
		return reply(errBadReg)
	}
	if err := s.t.WriteReg(s.gCPU, Reg(n), regFromBytes(p)); err != nil {
		return reply(errBadReg)
	}
	return reply(replyOK)
}

// maxMemRead bounds an m reply to what fits in a packet of packetSize.
const maxMemRead = (packetSize - 16) / 2

// parseAddrLen parses "addr,length".
func parseAddrLen(s string) (addr, length uint64, ok bool) {
	a, l, found := strings.Cut(s, ",")
	if !found {
		return 0, 0, false
	}
	addr, err1 := parseHex(a)
	length, err2 := parseHex(l)
	return addr, length, err1 == nil && err2 == nil
}

func (s *session) readMem(arg string) action {
	addr, length, ok := parseAddrLen(arg)
	if !ok {
		return reply(errMalformed)
	}
	// A shorter reply than asked for is allowed; GDB asks again for the
	// rest.
	length = min(length, maxMemRead)
	if addr+length < addr {
		length = -addr // up to the top of the address space
	}
	p := make([]byte, length)
	n := s.readPartial(addr, p)
	if n == 0 && length > 0 {
		return reply(errMemory)
	}
	return action{kind: actReply, reply: appendHex(nil, p[:n])}
}

// readPartial reads as much of p as is readable from addr on, page by
// page once a whole read failed, so that a read running into an unmapped
// page returns the mapped part (as gdbserver does).
func (s *session) readPartial(addr uint64, p []byte) int {
	if s.t.ReadVirt(s.gCPU, addr, p) == nil {
		return len(p)
	}
	const page = 4096
	n := 0
	for n < len(p) {
		a := addr + uint64(n)
		chunk := min(uint64(len(p)-n), page-a%page)
		if s.t.ReadVirt(s.gCPU, a, p[n:n+int(chunk)]) != nil {
			break
		}
		n += int(chunk)
	}
	return n
}

func (s *session) writeMem(arg string) action {
	al, data, ok := strings.Cut(arg, ":")
	if !ok {
		return reply(errMalformed)
	}
	addr, length, ok := parseAddrLen(al)
	if !ok {
		return reply(errMalformed)
	}
	p, err := decodeHex(data)
	if err != nil || uint64(len(p)) != length {
		return reply(errMalformed)
	}
	return s.write(addr, p)
}

func (s *session) writeMemBinary(arg []byte) action {
	i := bytes.IndexByte(arg, ':')
	if i < 0 {
		return reply(errMalformed)
	}
	addr, length, ok := parseAddrLen(string(arg[:i]))
	if !ok {
		return reply(errMalformed)
	}
	p, err := unescapeBinary(arg[i+1:])
	if err != nil || uint64(len(p)) != length {
		return reply(errMalformed)
	}
	return s.write(addr, p)
}

func (s *session) write(addr uint64, p []byte) action {
	if len(p) == 0 {
		// GDB probes for X support with a zero-length write.
		return reply(replyOK)
	}
	if err := s.t.WriteVirt(s.gCPU, addr, p); err != nil {
		s.log.Debug("gdbstub: memory write", "addr", fmt.Sprintf("%#x", addr), "len", len(p), "err", err)
		return reply(errMemory)
	}
	return reply(replyOK)
}

// thread parses a thread id: hex 1..N, "0" (any thread: the current one)
// or, when all is set, "-1" (every thread, returned as -1). GDB's
// multiprocess form pP.T is accepted too.
func (s *session) thread(id string, all bool) (int, bool) {
	if strings.HasPrefix(id, "p") {
		_, t, ok := strings.Cut(id, ".")
		if !ok {
			return 0, false
		}
		id = t
	}
	switch id {
	case "-1":
		if all {
			return -1, true
		}
		return 0, false
	case "0":
		return s.gCPU, true
	}
	v, err := parseHex(id)
	if err != nil || v == 0 || v > uint64(s.n) {
		return 0, false
	}
	return int(v) - 1, true
}

func (s *session) setThread(arg string) action {
	if arg == "" {
		return reply(errMalformed)
	}
	op, id := arg[0], arg[1:]
	switch op {
	case 'g':
		cpu, ok := s.thread(id, true)
		if !ok {
			return reply(errBadThread)
		}
		if cpu >= 0 {
			s.gCPU = cpu
		}
	case 'c':
		cpu, ok := s.thread(id, true)
		if !ok {
			return reply(errBadThread)
		}
		s.cCPU = cpu
	default:
		return reply(errMalformed)
	}
	return reply(replyOK)
}

// resumeLegacy handles c, s (op is 'c' or 's') and, with sig set, C and S,
// whose signal is ignored: a CPU has no signals to deliver.
func (s *session) resumeLegacy(op byte, arg string, sig bool) action {
	if sig {
		sigStr, rest, _ := strings.Cut(arg, ";")
		if _, err := parseHex(sigStr); err != nil {
			return reply(errMalformed)
		}
		arg = rest
	}
	cpu := s.cCPU
	if cpu < 0 {
		cpu = s.gCPU
	}
	if arg != "" {
		addr, err := parseHex(arg)
		if err != nil {
			return reply(errMalformed)
		}
		if err := s.t.WriteReg(cpu, RegPC, addr); err != nil {
			return reply(errBadReg)
		}
	}
	return s.resume(op == 's', cpu)
}

func (s *session) resume(step bool, cpu int) action {
	if s.exited {
		return reply("W00")
	}
	if !step {
		return action{kind: actResume, step: -1}
	}
	if !s.t.CPUInfo(cpu).PoweredOn {
		// A powered-off vCPU has no next instruction: fail the request
		// (GDB reports it and stays stopped) instead of a stop.
		return reply(errBadThread)
	}
	return action{kind: actResume, step: cpu}
}

// vCont handles vCont;action[:thread]... The leftmost action that names a
// thread applies to it. All-stop with one interleaving of vCPUs has two
// ways to resume: step one vCPU (what Target.Run does with the others is
// its business) or run them all, so continuing any thread continues all.
func (s *session) vCont(arg string) action {
	if arg == "" || arg[0] != ';' {
		return reply(errMalformed)
	}
	step := -2 // none yet
	for _, a := range strings.Split(arg[1:], ";") {
		act, tid, hasTID := strings.Cut(a, ":")
		if act == "" {
			return reply(errMalformed)
		}
		cpu := -1
		if hasTID {
			c, ok := s.thread(tid, true)
			if !ok {
				return reply(errBadThread)
			}
			cpu = c
		}
		switch act[0] {
		case 'c', 's':
			if len(act) != 1 {
				return reply(errMalformed)
			}
		case 'C', 'S':
			if _, err := parseHex(act[1:]); err != nil {
				return reply(errMalformed)
			}
		default:
			return reply(errMalformed)
		}
		if (act[0] == 's' || act[0] == 'S') && step == -2 {
			if cpu < 0 {
				cpu = s.gCPU
			}
			step = cpu
		}
	}
	if step >= 0 {
		return s.resume(true, step)
	}
	return s.resume(false, -1)
}

func (s *session) vPacket(arg string) action {
	name, _, _ := strings.Cut(arg, ";")
	switch name {
	case "Cont?":
		return reply("vCont;c;C;s;S")
	case "Cont":
		return s.vCont(arg[len("Cont"):])
	case "Kill":
		// As k, but GDB waits for the reply.
		return action{kind: actDetach, reply: []byte(replyOK)}
	}
	return reply("")
}

func (s *session) query(arg string) action {
	name, rest, _ := strings.Cut(arg, ":")
	switch name {
	case "Supported":
		for _, f := range strings.Split(rest, ";") {
			switch f {
			case "swbreak+":
				s.swbreak = true
			case "hwbreak+":
				s.hwbreak = true
			}
		}
		return reply(fmt.Sprintf("PacketSize=%x;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+;QStartNoAckMode+", packetSize))
	case "Xfer":
		return s.xfer(rest)
	case "Attached":
		// The guest existed before the debugger came: detach, not kill,
		// on quit.
		return reply("1")
	case "C":
		return reply(fmt.Sprintf("QC%x", s.gCPU+1))
	case "fThreadInfo":
		var b strings.Builder
		b.WriteByte('m')
		for i := 0; i < s.n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%x", i+1)
		}
		return reply(b.String())
	case "sThreadInfo":
		return reply("l")
	}
	if t, ok := strings.CutPrefix(arg, "ThreadExtraInfo,"); ok {
		cpu, ok := s.thread(t, false)
		if !ok {
			return reply(errBadThread)
		}
		return action{kind: actReply, reply: appendHex(nil, []byte(s.threadInfo(cpu)))}
	}
	return reply("")
}

// threadInfo is what `info threads` shows for a vCPU.
func (s *session) threadInfo(cpu int) string {
	ci := s.t.CPUInfo(cpu)
	str := fmt.Sprintf("CPU#%d EL%d", cpu, ci.EL)
	switch {
	case !ci.PoweredOn:
		str += " (powered off)"
	case ci.Waiting:
		str += " (WFI)"
	}
	return str
}

// xfer serves qXfer:features:read:target.xml:offset,length.
func (s *session) xfer(arg string) action {
	parts := strings.SplitN(arg, ":", 4)
	if len(parts) != 4 || parts[0] != "features" {
		return reply("")
	}
	if parts[1] != "read" {
		return reply("")
	}
	if parts[2] != "target.xml" {
		return reply(errMalformed)
	}
	off, length, ok := parseAddrLen(parts[3])
	if !ok {
		return reply(errMalformed)
	}
	doc := targetXML()
	if off >= uint64(len(doc)) {
		return reply("l")
	}
	// Escaping can double the data; keep the reply within a packet.
	length = min(length, packetSize/2-8)
	end := min(off+length, uint64(len(doc)))
	out := []byte{'m'}
	if end == uint64(len(doc)) {
		out[0] = 'l'
	}
	return action{kind: actReply, reply: escapeBinary(out, []byte(doc[off:end]))}
}

// breakpoint handles Z/z type,addr,kind.
func (s *session) breakpoint(insert bool, arg string) action {
	fields := strings.Split(arg, ",")
	if len(fields) != 3 || len(fields[0]) != 1 {
		return reply(errMalformed)
	}
	addr, err := parseHex(fields[1])
	if err != nil {
		return reply(errMalformed)
	}
	// A breakpoint's kind may carry ";cond" lists; they are not offered in
	// qSupported, so only a plain number is accepted.
	size, err := parseHex(fields[2])
	if err != nil {
		return reply(errMalformed)
	}
	switch typ := fields[0][0]; typ {
	case '0', '1':
		return s.codeBreakpoint(insert, typ-'0', addr)
	case '2', '3', '4':
		if size == 0 || addr+size < addr {
			return reply(errMalformed)
		}
		kind := [...]WatchKind{WatchWrite, WatchRead, WatchAccess}[typ-'2']
		return s.watchpoint(insert, wpKey{addr, size, kind})
	}
	return reply("")
}

func (s *session) codeBreakpoint(insert bool, typ byte, addr uint64) action {
	k := bpKey{typ, addr}
	if insert == s.bps[k] {
		return reply(replyOK) // already so
	}
	if insert {
		if s.hostBPs[addr] == 0 {
			if err := s.t.SetBreakpoint(addr); err != nil {
				s.log.Debug("gdbstub: setting breakpoint", "addr", fmt.Sprintf("%#x", addr), "err", err)
				return reply(errTarget)
			}
		}
		s.hostBPs[addr]++
		s.bps[k] = true
		return reply(replyOK)
	}
	if s.hostBPs[addr] == 1 {
		if err := s.t.ClearBreakpoint(addr); err != nil {
			return reply(errTarget)
		}
	}
	s.hostBPs[addr]--
	if s.hostBPs[addr] == 0 {
		delete(s.hostBPs, addr)
	}
	delete(s.bps, k)
	return reply(replyOK)
}

func (s *session) watchpoint(insert bool, k wpKey) action {
	if insert == s.wps[k] {
		return reply(replyOK)
	}
	if insert {
		if err := s.t.SetWatchpoint(k.addr, k.length, k.kind); err != nil {
			s.log.Debug("gdbstub: setting watchpoint", "addr", fmt.Sprintf("%#x", k.addr), "err", err)
			return reply(errTarget)
		}
		s.wps[k] = true
		return reply(replyOK)
	}
	if err := s.t.ClearWatchpoint(k.addr, k.length, k.kind); err != nil {
		return reply(errTarget)
	}
	delete(s.wps, k)
	return reply(replyOK)
}

// clearAll removes every breakpoint and watchpoint the debugger left, so
// that the guest runs freely after it went.
func (s *session) clearAll() {
	for addr := range s.hostBPs {
		if err := s.t.ClearBreakpoint(addr); err != nil {
			s.log.Warn("gdbstub: clearing breakpoint", "addr", fmt.Sprintf("%#x", addr), "err", err)
		}
	}
	for k := range s.wps {
		if err := s.t.ClearWatchpoint(k.addr, k.length, k.kind); err != nil {
			s.log.Warn("gdbstub: clearing watchpoint", "addr", fmt.Sprintf("%#x", k.addr), "err", err)
		}
	}
	clear(s.hostBPs)
	clear(s.bps)
	clear(s.wps)
}
