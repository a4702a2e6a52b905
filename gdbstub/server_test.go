package gdbstub

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// client is a minimal GDB: it frames packets, acks replies until no-ack
// mode, and reads replies.
type client struct {
	t     *testing.T
	c     net.Conn
	r     *bufio.Reader
	noAck bool
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Only a hang guard: on a loaded host a reply may take long.
	c.SetDeadline(waitfor.Deadline(t))
	return &client{t: t, c: c, r: bufio.NewReader(c)}
}

func (c *client) raw(s string) {
	c.t.Helper()
	if _, err := c.c.Write([]byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

// send sends a packet and, in ack mode, expects its '+'.
func (c *client) send(payload string) {
	c.t.Helper()
	c.raw(string(frame([]byte(payload))))
	if !c.noAck {
		if b := c.byte(); b != '+' {
			c.t.Fatalf("after %q: got %q, want +", payload, b)
		}
	}
}

func (c *client) byte() byte {
	c.t.Helper()
	b, err := c.r.ReadByte()
	if err != nil {
		c.t.Fatalf("reading: %v", err)
	}
	return b
}

// recv reads one packet (skipping stray acks), checks its checksum and
// acks it.
func (c *client) recv() string {
	c.t.Helper()
	for c.byte() != '$' {
	}
	data, err := c.r.ReadString('#')
	if err != nil {
		c.t.Fatal(err)
	}
	data = data[:len(data)-1]
	cs := string([]byte{c.byte(), c.byte()})
	if want := string(frame([]byte(data))); want[len(want)-2:] != cs {
		c.t.Fatalf("packet %q: checksum %s, want %s", data, cs, want[len(want)-2:])
	}
	if !c.noAck {
		c.raw("+")
	}
	return data
}

func (c *client) cmd(payload, want string) {
	c.t.Helper()
	c.send(payload)
	if got := c.recv(); got != want {
		c.t.Errorf("%q: reply %q, want %q", payload, got, want)
	}
}

// closed waits for the stub to close the connection.
func (c *client) closed() {
	c.t.Helper()
	if _, err := io.ReadAll(c.r); err != nil && !errors.Is(err, net.ErrClosed) {
		c.t.Logf("after close: %v", err)
	}
}

// startServe runs Serve on a fake target with n CPUs and waits until the
// guest runs freely. stop cancels Serve and returns its result; it may be
// called more than once.
func startServe(t *testing.T, n int) (f *fakeTarget, addr string, stop func() error) {
	t.Helper()
	f = newFake(n)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, f, Config{Logger: quiet()}) }()
	var once sync.Once
	var result error
	stop = func() error {
		once.Do(func() {
			cancel()
			result = waitfor.Recv(t, "Serve to return after cancel", done)
		})
		return result
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	waitRunning(t, f)
	return f, ln.Addr().String(), stop
}

func waitRunning(t *testing.T, f *fakeTarget) {
	t.Helper()
	waitfor.Recv(t, "the guest to run freely", f.running)
}

func (f *fakeTarget) push(ev StopEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, ev)
}

func TestServeSession(t *testing.T) {
	f, addr, _ := startServe(t, 2)
	c := dial(t, addr)
	c.raw("+")
	c.cmd("qSupported:multiprocess+;swbreak+;hwbreak+", "PacketSize=4000;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+;QStartNoAckMode+")
	c.cmd("QStartNoAckMode", "OK")
	c.noAck = true
	c.cmd("?", "T05thread:1;")
	c.cmd("Z0,40000040,4", "OK")
	c.cmd("Z2,40000100,8", "OK")

	f.push(StopEvent{CPU: 1, Reason: StopBreakpoint})
	c.cmd("vCont;c", "T05thread:2;swbreak:;")
	c.cmd("qC", "QC2")
	c.cmd("p20", "4000004000000000")
	c.cmd("vCont;s:2;c", "T05thread:2;")
	c.cmd("p20", "4400004000000000")
	f.push(StopEvent{CPU: 0, Reason: StopWatchpoint, Addr: 0x40000100, Write: true})
	c.cmd("c", "T05thread:1;watch:40000100;")

	// Ctrl-C interrupts a run that would not stop by itself.
	c.send("c")
	waitRunning(t, f)
	c.raw("\x03")
	if got := c.recv(); got != "T02thread:1;" {
		t.Errorf("after Ctrl-C: %q", got)
	}
	// A packet sent while the guest runs is answered after the stop.
	c.send("c")
	waitRunning(t, f)
	c.send("qC")
	c.raw("\x03")
	if got := c.recv(); got != "T02thread:1;" {
		t.Errorf("after Ctrl-C: %q", got)
	}
	if got := c.recv(); got != "QC1" {
		t.Errorf("queued qC: %q", got)
	}

	c.cmd("D", "OK")
	c.closed()
	waitRunning(t, f) // free running again
	if b, w := f.counts(); b != 0 || w != 0 {
		t.Errorf("after detach: %d breakpoints, %d watchpoints left", b, w)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	want := []int{-1, -1, 1, -1, -1, -1, -1}
	if len(f.runs) != len(want) {
		t.Fatalf("runs %v, want %v", f.runs, want)
	}
	for i := range want {
		if f.runs[i] != want[i] {
			t.Fatalf("runs %v, want %v", f.runs, want)
		}
	}
}

func TestServeAcks(t *testing.T) {
	_, addr, _ := startServe(t, 1)
	c := dial(t, addr)
	c.raw("$g#00") // bad checksum
	if b := c.byte(); b != '-' {
		t.Errorf("bad checksum: %q, want -", b)
	}
	c.cmd("qC", "QC1")
	c.raw("-") // ask for the last reply again
	if got := c.recv(); got != "QC1" {
		t.Errorf("retransmission = %q", got)
	}
	c.cmd(strings.Repeat("m", packetSize+1), "E01")
	c.raw("garbage\n")
	c.cmd("T1", "OK")
	c.send("k")
	c.closed()
}

func TestServeOneClient(t *testing.T) {
	f, addr, _ := startServe(t, 1)
	c := dial(t, addr)
	c.cmd("?", "T05thread:1;")
	// A second debugger waits for its turn; a third is refused.
	second := dial(t, addr)
	second.raw(string(frame([]byte("qC")))) // its ack comes when it is served
	third := dial(t, addr)
	if _, err := third.r.ReadByte(); err == nil {
		t.Error("a third debugger was served")
	}
	c.cmd("qC", "QC1")
	c.cmd("Z1,40000000,4", "OK")
	c.cmd("D", "OK")
	c.closed()
	if b := second.byte(); b != '+' {
		t.Errorf("waiting debugger: got %q, want +", b)
	}
	if got := second.recv(); got != "QC1" {
		t.Errorf("waiting debugger: qC = %q", got)
	}
	if b, _ := f.counts(); b != 0 {
		t.Errorf("%d breakpoints left after detach", b)
	}
	// Hanging up while the guest runs lets it run on, without the
	// debugger's breakpoints.
	second.cmd("Z1,40000000,4", "OK")
	second.send("c")
	waitRunning(t, f)
	second.c.Close()
	waitRunning(t, f)
	if b, _ := f.counts(); b != 0 {
		t.Errorf("%d breakpoints left after hang-up", b)
	}
	// The next debugger is served.
	c = dial(t, addr)
	c.cmd("?", "T05thread:1;")
}

func TestServePowerOff(t *testing.T) {
	f, addr, _ := startServe(t, 1)
	c := dial(t, addr)
	c.cmd("?", "T05thread:1;")
	f.push(StopEvent{Reason: StopPoweredOff})
	c.cmd("c", "W00")
	c.cmd("?", "W00")
	c.cmd("s", "W00")
	c.c.Close()

	// The stub stays up for a post-mortem debugger.
	c = dial(t, addr)
	c.cmd("?", "T05thread:1;")
	c.cmd("p20", "0000004000000000")
}

func TestServeMachineError(t *testing.T) {
	f, addr, _ := startServe(t, 1)
	c := dial(t, addr)
	c.cmd("?", "T05thread:1;")
	f.push(StopEvent{Reason: StopError, Err: errors.New("hostcall 7 failed")})
	c.send("c")
	if got, want := c.recv(), "O"+string(appendHex(nil, []byte("kpemu: guest stopped: hostcall 7 failed\n"))); got != want {
		t.Errorf("console message %q, want %q", got, want)
	}
	if got := c.recv(); got != "T06thread:1;" {
		t.Errorf("stop reply %q", got)
	}
}

func TestServeShutdown(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, f *fakeTarget, c *client)
	}{
		{"free running", nil},
		{"halted", func(t *testing.T, f *fakeTarget, c *client) { c.cmd("?", "T05thread:1;") }},
		{"running for the debugger", func(t *testing.T, f *fakeTarget, c *client) {
			c.cmd("?", "T05thread:1;")
			c.send("c")
			waitRunning(t, f)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, addr, stop := startServe(t, 1)
			if tt.setup != nil {
				tt.setup(t, f, dial(t, addr))
			}
			if err := stop(); err != nil {
				t.Errorf("Serve = %v", err)
			}
		})
	}
}

func TestServeAcceptError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := Serve(context.Background(), ln, newFake(1), Config{Logger: quiet()}); err == nil || !errors.Is(err, net.ErrClosed) {
		t.Errorf("Serve on a closed listener = %v, want a wrapped net.ErrClosed", err)
	}
}
