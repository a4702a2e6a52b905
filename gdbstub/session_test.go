package gdbstub

import (
	"encoding/hex"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTestSession(f *fakeTarget) *session {
	s := newSession(f, quiet(), StopEvent{CPU: 0, Reason: StopInterrupted})
	s.handle([]byte("qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+"))
	return s
}

// step is one packet and the action expected for it. For actReply and
// actDetach, reply is the reply expected; for actResume, stepCPU is.
type step struct {
	pkt     string
	kind    actKind
	reply   string
	stepCPU int
}

func r(pkt, reply string) step { return step{pkt: pkt, kind: actReply, reply: reply} }

func resume(pkt string, cpu int) step { return step{pkt: pkt, kind: actResume, stepCPU: cpu} }

// gReply is the g reply for CPU cpu of a fresh fake.
func gReply(f *fakeTarget, cpu int) string {
	var out []byte
	for r := Reg(0); r < numRegs; r++ {
		v, _ := f.ReadReg(cpu, r)
		out = appendRegHex(out, v, r.size())
	}
	return string(out)
}

func TestCommands(t *testing.T) {
	f0 := newFake(2)
	g0, g1 := gReply(f0, 0), gReply(f0, 1)
	// A G packet that changes x0 of CPU 1 to 0x1122334455667788.
	gNew := "8877665544332211" + g1[16:]
	xml := targetXML()

	tests := []struct {
		name  string
		setup func(f *fakeTarget)
		steps []step
		check func(t *testing.T, f *fakeTarget)
	}{
		{name: "halt reason", steps: []step{r("?", "T05thread:1;")}},
		{name: "unknown packets", steps: []step{r("qFoo", ""), r("vMustReplyEmpty", ""), r("!", ""), r("Qbar", ""), r("", ""), r("qXfer:libraries:read::0,10", ""), r("qXfer:features:write:target.xml:0,1", ""), r("Z9,0,0", "")}},
		{name: "qSupported", steps: []step{r("qSupported:xmlRegisters=i386", "PacketSize=4000;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+;QStartNoAckMode+")}},
		{name: "no-ack mode", steps: []step{r("QStartNoAckMode", "OK")}},
		{name: "target description", steps: []step{
			r("qXfer:features:read:target.xml:0,fff", "l"+xml),
			r("qXfer:features:read:target.xml:0,10", "m"+xml[:16]),
			r("qXfer:features:read:target.xml:10,10", "m"+xml[16:32]),
			r("qXfer:features:read:target.xml:ffff,10", "l"),
			r("qXfer:features:read:other.xml:0,10", "E01"),
			r("qXfer:features:read:target.xml:0", "E01"),
			r("qXfer:features:read:target.xml:zz,1", "E01"),
		}},
		{name: "read registers", steps: []step{r("g", g0), r("Hg2", "OK"), r("g", g1)}},
		{name: "write registers", steps: []step{
			r("Hg2", "OK"), r("G"+gNew, "OK"), r("g", gNew),
			r("G"+gNew[2:], "E01"), r("G"+gNew+"00", "E01"), r("Gzz"+gNew[2:], "E01"),
		}, check: func(t *testing.T, f *fakeTarget) {
			// Unchanged registers are not written back (aliases such as
			// sp and sp_el1 would undo each other).
			if len(f.writes) != 1 || f.writes[0] != RegX0 {
				t.Errorf("G wrote %v, want only x0", f.writes)
			}
		}},
		{name: "one register", steps: []step{
			r("p20", "0000004000000000"), r("p21", "c5030000"), r("p0", "0000000000000000"),
			r("p2f", "2f00000000000000"), // currentel: the fake's registers hold their numbers
			r("p999", "E03"), r("pzz", "E01"), r("p", "E01"), r("p10000000000000000", "E01"),
			r("P20=1000004000000000", "OK"), r("p20", "1000004000000000"),
			r("P21=c4030000", "OK"), r("p21", "c4030000"),
			r("P21=c403000000000000", "E03"), r("P20=10", "E03"), r("P999=00", "E03"),
			r("P20", "E01"), r("P20=zz", "E01"), r("Pq=00", "E01"),
		}},
		{name: "read memory", steps: []step{
			r("m40000000,4", "00010203"), r("m40000010,0", ""), r("m40001ffe,2", "feff"),
			r("m40001ffe,4", "feff"), // partial: runs off the end of RAM
			r("m0,4", "E14"), r("mffffffffffffffff,2", "E14"),
			r("m40000000", "E01"), r("mzz,4", "E01"), r("m40000000,zz", "E01"), r("m,", "E01"),
		}},
		{name: "huge read is truncated", steps: []step{r("m40000000,ffffffff", hex.EncodeToString(f0.mem[:maxMemRead]))}},
		{name: "write memory", steps: []step{
			r("M40000000,2:abcd", "OK"), r("m40000000,3", "abcd02"),
			r("M40000000,3:abcd", "E01"), r("M40000000,2:abcz", "E01"), r("M40000000,2", "E01"),
			r("M0,1:00", "E14"),
		}},
		{name: "binary write", steps: []step{
			r("X40000000,0:", "OK"),
			r("X40000000,4:}]}\x03}\x04}\x0a", "OK"), r("m40000000,4", "7d23242a"),
			r("X40000000,2:ab", "OK"), r("m40000000,2", "6162"),
			r("X40000000,3:ab", "E01"), r("X40000000,1:}", "E01"), r("X40000000,1", "E01"),
			r("X0,1:a", "E14"),
		}},
		{name: "threads", setup: func(f *fakeTarget) { f.info[1].PoweredOn = false }, steps: []step{
			r("qfThreadInfo", "m1,2"), r("qsThreadInfo", "l"), r("qC", "QC1"),
			r("T1", "OK"), r("T2", "OK"), r("T0", "OK"), r("T3", "E02"), r("T-1", "E02"), r("Tzz", "E02"),
			r("Hg2", "OK"), r("qC", "QC2"), r("Hg0", "OK"), r("qC", "QC2"), r("Hg-1", "OK"), r("Hgp1.1", "OK"), r("qC", "QC1"),
			r("Hg3", "E02"), r("Hgp1", "E02"), r("Hc-1", "OK"), r("Hc1", "OK"), r("Hx1", "E01"), r("H", "E01"),
			r("qThreadExtraInfo,1", hex.EncodeToString([]byte("CPU#0 EL1"))),
			r("qThreadExtraInfo,2", hex.EncodeToString([]byte("CPU#1 EL1 (powered off)"))),
			r("qThreadExtraInfo,3", "E02"),
			r("qAttached", "1"), r("qAttached:1", "1"),
		}},
		{name: "continue and step", steps: []step{
			r("vCont?", "vCont;c;C;s;S"),
			resume("c", -1), resume("vCont;c", -1), resume("vCont;c:1", -1), resume("C05", -1),
			resume("s", 0), resume("vCont;s:2;c", 1), resume("vCont;S05:1", 0), resume("vCont;s", 0),
			resume("vCont;c:2;s:1", 0), resume("S0b", 0), r("Hc2", "OK"), resume("s", 1),
			r("vCont", "E01"), r("vCont;", "E01"), r("vCont;x", "E01"), r("vCont;s:9", "E02"), r("vCont;cc", "E01"),
			r("vCont;Szz", "E01"), r("vCont;r0,1", "E01"), r("czz", "E01"), r("Czz", "E01"), r("S05;zz", "E01"),
		}},
		{name: "step a powered-off CPU", setup: func(f *fakeTarget) { f.info[1] = CPUInfo{Waiting: true} }, steps: []step{
			r("vCont;s:2", "E02"), resume("vCont;c:2", -1), r("Hc2", "OK"), r("s", "E02"),
			r("qThreadExtraInfo,2", hex.EncodeToString([]byte("CPU#1 EL0 (powered off)"))),
		}},
		{name: "waiting CPU", setup: func(f *fakeTarget) { f.info[1].Waiting = true }, steps: []step{
			r("qThreadExtraInfo,2", hex.EncodeToString([]byte("CPU#1 EL1 (WFI)"))),
		}},
		{name: "continue at an address", steps: []step{resume("c40000100", -1), resume("S05;40000200", 0)},
			check: func(t *testing.T, f *fakeTarget) {
				if pc := f.regs[0][RegPC]; pc != 0x40000200 {
					t.Errorf("pc = %#x", pc)
				}
			}},
		{name: "breakpoints", steps: []step{
			r("Z0,40000000,4", "OK"), r("Z1,40000000,4", "OK"), r("Z0,40000000,4", "OK"), r("z0,40000000,4", "OK"),
			r("Z1,40000010,4", "OK"), r("z1,40000010,4", "OK"), r("z1,40000010,4", "OK"),
			r("Z0,zz,4", "E01"), r("Z0,40000000", "E01"), r("Z0,40000000,4;X1,0", "E01"), r("Z00,1,4", "E01"), r("Z", "E01"),
		}, check: func(t *testing.T, f *fakeTarget) {
			if !f.bps[0x40000000] || len(f.bps) != 1 {
				t.Errorf("host breakpoints = %v, want only 0x40000000 (Z1 still holds it)", f.bps)
			}
		}},
		{name: "watchpoints", steps: []step{
			r("Z2,40000100,8", "OK"), r("Z3,40000200,4", "OK"), r("Z4,40000300,1", "OK"), r("z3,40000200,4", "OK"),
			r("Z2,40000100,0", "E01"), r("Z2,ffffffffffffffff,2", "E01"),
		}, check: func(t *testing.T, f *fakeTarget) {
			if len(f.wps) != 2 || !f.wps[wpKey{0x40000100, 8, WatchWrite}] || !f.wps[wpKey{0x40000300, 1, WatchAccess}] {
				t.Errorf("watchpoints = %v", f.wps)
			}
		}},
		{name: "detach", steps: []step{{pkt: "D", kind: actDetach, reply: "OK"}, {pkt: "D;1", kind: actDetach, reply: "OK"}, {pkt: "vKill;1", kind: actDetach, reply: "OK"}, {pkt: "k", kind: actKill}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(2)
			if tt.setup != nil {
				tt.setup(f)
			}
			s := newTestSession(f)
			for _, st := range tt.steps {
				act := s.handle([]byte(st.pkt))
				if act.kind != st.kind {
					t.Errorf("%q: action %d, want %d (reply %q)", st.pkt, act.kind, st.kind, act.reply)
					continue
				}
				switch act.kind {
				case actReply, actDetach:
					if string(act.reply) != st.reply {
						t.Errorf("%q: reply %q, want %q", st.pkt, trim(act.reply), trim([]byte(st.reply)))
					}
				case actResume:
					if act.step != st.stepCPU {
						t.Errorf("%q: step %d, want %d", st.pkt, act.step, st.stepCPU)
					}
				}
			}
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}

func trim(p []byte) string {
	if len(p) > 80 {
		return string(p[:80]) + "..."
	}
	return string(p)
}

func TestStopReplies(t *testing.T) {
	tests := []struct {
		name  string
		setup []string
		ev    StopEvent
		want  string
	}{
		{"interrupt", nil, StopEvent{CPU: 1, Reason: StopInterrupted}, "T02thread:2;"},
		{"step", nil, StopEvent{CPU: 0, Reason: StopStep}, "T05thread:1;"},
		{"software breakpoint", []string{"Z0,40000000,4"}, StopEvent{CPU: 0, Reason: StopBreakpoint}, "T05thread:1;swbreak:;"},
		{"hardware breakpoint", []string{"Z1,40000000,4"}, StopEvent{CPU: 1, Reason: StopBreakpoint}, "T05thread:2;hwbreak:;"},
		{"write watchpoint", []string{"Z2,40000100,8"}, StopEvent{Reason: StopWatchpoint, Addr: 0x40000104, Write: true}, "T05thread:1;watch:40000104;"},
		{"read watchpoint", []string{"Z3,40000100,8"}, StopEvent{Reason: StopWatchpoint, Addr: 0x40000100}, "T05thread:1;rwatch:40000100;"},
		{"access watchpoint, write", []string{"Z4,40000100,8"}, StopEvent{Reason: StopWatchpoint, Addr: 0x40000107, Write: true}, "T05thread:1;awatch:40000107;"},
		{"access watchpoint, read", []string{"Z4,40000100,8", "Z2,40000100,8"}, StopEvent{Reason: StopWatchpoint, Addr: 0x40000100}, "T05thread:1;awatch:40000100;"},
		{"machine failure", nil, StopEvent{Reason: StopError}, "T06thread:1;"},
		{"out-of-range CPU", nil, StopEvent{CPU: 7, Reason: StopStep}, "T05thread:1;"},
		{"powered-off CPU", []string{"off 0"}, StopEvent{CPU: 0, Reason: StopInterrupted}, "T02thread:2;"},
		{"power-off", nil, StopEvent{Reason: StopPoweredOff}, "W00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(2)
			s := newTestSession(f)
			for _, p := range tt.setup {
				if p == "off 0" {
					f.info[0].PoweredOn = false
					continue
				}
				s.handle([]byte(p))
			}
			if tt.ev.Reason == StopBreakpoint {
				f.regs[tt.ev.CPU][RegPC] = 0x40000000
			}
			if got := string(s.stopped(tt.ev)); got != tt.want {
				t.Errorf("stop reply %q, want %q", got, tt.want)
			}
			if got := string(s.handle([]byte("?")).reply); got != tt.want {
				t.Errorf("? = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPoweredOffGuest(t *testing.T) {
	// A debugger attaching to a guest that already powered off may inspect
	// it; resuming it reports the exit.
	f := newFake(1)
	s := newSession(f, quiet(), StopEvent{Reason: StopPoweredOff})
	if got := string(s.handle([]byte("?")).reply); got != "T05thread:1;" {
		t.Errorf("? = %q", got)
	}
	s.stopped(StopEvent{Reason: StopPoweredOff})
	for _, p := range []string{"c", "s", "vCont;c", "?"} {
		if act := s.handle([]byte(p)); act.kind != actReply || string(act.reply) != "W00" {
			t.Errorf("%s after power-off: %d %q", p, act.kind, act.reply)
		}
	}
}

func TestClearAll(t *testing.T) {
	f := newFake(1)
	s := newTestSession(f)
	for _, p := range []string{"Z0,40000000,4", "Z1,40000000,4", "Z1,40000004,4", "Z2,40000000,4", "Z4,40000000,8"} {
		s.handle([]byte(p))
	}
	if b, w := f.counts(); b != 2 || w != 2 {
		t.Fatalf("before: %d breakpoints, %d watchpoints", b, w)
	}
	s.clearAll()
	if b, w := f.counts(); b != 0 || w != 0 {
		t.Errorf("after: %d breakpoints, %d watchpoints", b, w)
	}
}

func TestTargetRefuses(t *testing.T) {
	f := newFake(1)
	f.failBP = true
	s := newTestSession(f)
	if got := string(s.handle([]byte("Z0,40000000,4")).reply); got != "E04" {
		t.Errorf("Z0 on a refusing target = %q", got)
	}
	if len(s.hostBPs) != 0 || len(s.bps) != 0 {
		t.Errorf("a refused breakpoint was recorded")
	}
}

func TestTargetXML(t *testing.T) {
	xml := targetXML()
	for _, want := range []string{
		`<feature name="org.gnu.gdb.aarch64.core">`,
		`<reg name="x0" bitsize="64" type="int" regnum="0"/>`,
		`<reg name="x30" bitsize="64" type="int" regnum="30"/>`,
		`<reg name="sp" bitsize="64" type="data_ptr" regnum="31"/>`,
		`<reg name="pc" bitsize="64" type="code_ptr" regnum="32"/>`,
		`<reg name="cpsr" bitsize="32" type="int" regnum="33"/>`,
		`<feature name="org.kpemu.aarch64.sysregs">`,
		`<reg name="elr_el1" bitsize="64" type="code_ptr" regnum="34" group="system"/>`,
		`<reg name="cntvct_el0" bitsize="64" type="uint64" regnum="53" group="system"/>`,
	} {
		if !strings.Contains(xml, want) {
			t.Errorf("target.xml lacks %s", want)
		}
	}
	if strings.ContainsAny(xml, "$#}*") {
		t.Error("target.xml holds characters that need escaping; check the qXfer length arithmetic")
	}
	if gSize() != 33*8+4+int(numRegs-RegELR_EL1)*8 {
		t.Errorf("gSize = %d", gSize())
	}
}

// FuzzHandle checks that no packet panics the session or yields a reply
// that does not fit in a packet.
func FuzzHandle(f *testing.F) {
	for _, s := range []string{
		"g", "G00", "p20", "P20=00", "m40000000,4", "M40000000,1:00", "X40000000,1:}]", "Hg1", "Hc-1", "T1",
		"c", "s40000000", "C05;1", "S05", "vCont;s:1;c", "vCont;C05:p1.1", "Z0,40000000,4", "z2,0,8",
		"qSupported:swbreak+", "qXfer:features:read:target.xml:0,ffff", "qThreadExtraInfo,1", "D", "k",
		"mffffffffffffffff,ffffffffffffffff", "qXfer:features:read:target.xml:ffffffffffffffff,ffffffffffffffff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, pkt []byte) {
		fk := newFake(2)
		s := newTestSession(fk)
		act := s.handle(pkt)
		if len(act.reply) > packetSize {
			t.Fatalf("reply of %d bytes", len(act.reply))
		}
		if act.kind == actResume && (act.step < -1 || act.step >= 2) {
			t.Fatalf("step CPU %d", act.step)
		}
	})
}
