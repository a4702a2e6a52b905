package gdbstub

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"
)

// Config configures Serve. The zero value is usable.
type Config struct {
	Logger *slog.Logger // nil means slog.Default()
	// WriteTimeout bounds each write to the debugger, so that a client that
	// stops reading cannot wedge the stub; 0 means 10 s.
	WriteTimeout time.Duration
}

// Serve drives t and serves GDB clients on ln until ctx is done; it then
// closes ln, stops the guest and returns nil. It returns an error only when
// accepting connections fails. With no client attached the guest runs
// freely (and stays stopped once it powered off or failed); see the package
// documentation for what a client does.
func Serve(ctx context.Context, ln net.Listener, t Target, cfg Config) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	s := &server{t: t, log: cfg.Logger, writeTimeout: cfg.WriteTimeout}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopClose := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopClose()

	conns := make(chan net.Conn)
	acceptErr := make(chan error, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				acceptErr <- err
				return
			}
			select {
			case conns <- c:
			case <-ctx.Done():
				c.Close()
				acceptErr <- ctx.Err()
				return
			}
		}
	}()
	err := s.loop(ctx, conns, acceptErr)
	cancel()
	ln.Close()
	return err
}

type server struct {
	t            Target
	log          *slog.Logger
	writeTimeout time.Duration
}

// loop alternates between free running and serving one client.
func (s *server) loop(ctx context.Context, conns <-chan net.Conn, acceptErr <-chan error) error {
	// dead is set once the guest stopped on its own (power-off, machine
	// failure) with nobody attached: it stays stopped for a post-mortem.
	dead := false
	var last StopEvent
	// next is a debugger that connected while another was attached; it is
	// served as soon as that one goes, with the guest still halted.
	var next net.Conn
	for {
		conn := next
		next = nil
		switch {
		case conn != nil:
		case !dead:
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan StopEvent, 1)
			go func() { done <- s.t.Run(runCtx, -1) }()
			select {
			case ev := <-done:
				cancel()
				if ctx.Err() != nil {
					return nil
				}
				switch ev.Reason {
				case StopPoweredOff:
					s.log.Info("gdbstub: guest powered off; waiting for a debugger")
					dead, last = true, ev
				case StopError:
					s.log.Error("gdbstub: guest stopped", "cpu", ev.CPU, "err", ev.Err)
					dead, last = true, ev
				default:
					// A stop nobody asked for (no breakpoints are set
					// without a client): keep running.
					s.log.Debug("gdbstub: unexpected stop while free running", "reason", ev.Reason, "cpu", ev.CPU)
				}
				continue
			case conn = <-conns:
				cancel()
				last = <-done
			case err := <-acceptErr:
				cancel()
				<-done
				return s.acceptFailed(ctx, err)
			case <-ctx.Done():
				cancel()
				<-done
				return nil
			}
		default:
			select {
			case conn = <-conns:
			case err := <-acceptErr:
				return s.acceptFailed(ctx, err)
			case <-ctx.Done():
				return nil
			}
		}
		s.log.Info("gdbstub: debugger attached", "remote", conn.RemoteAddr().String())
		var ev StopEvent
		ev, next = s.serveConn(ctx, conn, conns, last)
		s.log.Info("gdbstub: debugger detached", "remote", conn.RemoteAddr().String())
		if ctx.Err() != nil {
			if next != nil {
				next.Close()
			}
			return nil
		}
		// Power-off is final; a failure may have been repaired by the
		// debugger, so try again.
		dead, last = ev.Reason == StopPoweredOff, ev
	}
}

func (s *server) acceptFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("gdbstub: accepting: %w", err)
}

// conn is the write side of a client connection.
type conn struct {
	c       net.Conn
	timeout time.Duration
	noAck   bool
	last    []byte // the last packet sent, for retransmission on '-'
	err     error  // the first write error; the session ends on it
}

func (c *conn) write(p []byte) {
	if c.err != nil {
		return
	}
	if err := c.c.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		c.err = err
		return
	}
	if _, err := c.c.Write(p); err != nil {
		c.err = err
	}
}

func (c *conn) send(payload []byte) {
	c.last = frame(payload)
	c.write(c.last)
}

// serveConn runs one debugger session, starting with the guest halted at
// halt, and returns the last stop when the client went, and a debugger
// that connected meanwhile (or nil). The guest is halted on return.
//
// One further debugger may wait for its turn: a quick reconnect can reach
// the listener before the stub noticed that the previous connection closed.
// Any more are refused, so that waiting connections cannot pile up.
func (s *server) serveConn(ctx context.Context, nc net.Conn, conns <-chan net.Conn, halt StopEvent) (last StopEvent, waiting net.Conn) {
	defer nc.Close()
	sess := newSession(s.t, s.log, halt)
	w := &conn{c: nc, timeout: s.writeTimeout}

	done := make(chan struct{})
	events := make(chan inEvent, 16)
	go readEvents(nc, events, done)

	var (
		running   bool
		runCancel context.CancelFunc
		runDone   chan StopEvent
		pending   [][]byte // packets that arrived while the guest ran
	)
	defer func() {
		// Halt a resumption in flight before touching the target again.
		if running {
			runCancel()
			sess.stopped(<-runDone)
		}
		close(done)
		sess.clearAll()
		last = sess.stop
	}()

	// dispatch executes one packet and reports whether the session goes on.
	dispatch := func(pkt []byte) bool {
		act := sess.handle(pkt)
		switch act.kind {
		case actReply:
			w.send(act.reply)
			if string(pkt) == "QStartNoAckMode" {
				w.noAck = true
			}
		case actResume:
			var runCtx context.Context
			runCtx, runCancel = context.WithCancel(ctx)
			runDone = make(chan StopEvent, 1)
			running = true
			step := act.step
			go func() { runDone <- s.t.Run(runCtx, step) }()
		case actDetach:
			w.send(act.reply)
			return false
		case actKill:
			return false
		}
		return w.err == nil
	}

	for {
		if w.err != nil {
			s.log.Info("gdbstub: writing to the debugger", "err", w.err)
			return
		}
		if !running && len(pending) > 0 {
			pkt := pending[0]
			pending = pending[1:]
			if !dispatch(pkt) {
				return
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case c := <-conns:
			if waiting == nil {
				s.log.Info("gdbstub: a debugger waits for the attached one to go", "remote", c.RemoteAddr().String())
				waiting = c
				continue
			}
			s.log.Warn("gdbstub: refusing a debugger: one is attached and one waits", "remote", c.RemoteAddr().String())
			c.Close()
		case ev, ok := <-events:
			if !ok {
				return // the client hung up
			}
			switch ev.kind {
			case inInterrupt:
				if running {
					runCancel()
				}
			case inAck:
			case inNak:
				if !w.noAck && w.last != nil {
					w.write(w.last)
				}
			case inBadChecksum:
				// As QEMU: ask for retransmission, even in no-ack mode
				// where GDB then reports the packet as failed.
				w.write([]byte{'-'})
			case inOversize:
				if !w.noAck {
					w.write([]byte{'+'})
				}
				w.send([]byte(errMalformed))
			case inPacket:
				if !w.noAck {
					w.write([]byte{'+'})
				}
				if running {
					// All-stop GDB sends nothing while the guest runs; if
					// a client does, answer after the stop reply.
					pending = append(pending, ev.data)
					continue
				}
				if !dispatch(ev.data) {
					return
				}
			}
		case ev := <-runDone:
			running = false
			runCancel()
			if ctx.Err() != nil {
				sess.stopped(ev)
				return
			}
			if ev.Reason == StopError {
				s.log.Error("gdbstub: guest stopped", "cpu", ev.CPU, "err", ev.Err)
				w.send(appendHex([]byte{'O'}, []byte(fmt.Sprintf("kpemu: guest stopped: %v\n", ev.Err))))
			}
			w.send(sess.stopped(ev))
		}
	}
}

// readEvents parses the client's byte stream into events until it ends,
// then closes events.
func readEvents(c net.Conn, events chan<- inEvent, done <-chan struct{}) {
	defer close(events)
	r := bufio.NewReader(c)
	var p parser
	for {
		b, err := r.ReadByte()
		if err != nil {
			return // EOF, reset, or closed by the session: the client went
		}
		ev, ok := p.feed(b)
		if !ok {
			continue
		}
		select {
		case events <- ev:
		case <-done:
			return
		}
	}
}
