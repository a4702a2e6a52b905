package kprobes

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Spec is a probe as the command line names it (kpemu run --probe):
//
//	SYM[+OFF] | ADDR | k:SYM[+OFF]   a kprobe
//	j:SYM[:HANDLER]                  a jprobe; HANDLER is a guest function
//	                                 (e.g. j:do_fork:jdo_fork), without it a
//	                                 Go handler that counts the hits
//	r[MAXACTIVE]:SYM                 a kretprobe
//
// SYM may name a module's symbol as MOD:SYM (e1000ish:vnet_rx, or
// r:e1000ish:vnet_rx), as kprobe_events does.
type Spec struct {
	Type      Type
	Symbol    string
	Offset    uint64
	Addr      uint64
	MaxActive int
	Handler   string
}

// ParseSpec parses a probe spec.
func ParseSpec(s string) (Spec, error) {
	if s == "" {
		return Spec{}, errors.New("empty probe spec")
	}
	sp := Spec{Type: TypeKprobe}
	body := s
	if i := strings.IndexByte(s, ':'); i > 0 {
		kind, rest := s[:i], s[i+1:]
		switch {
		case kind == "k":
		case kind == "j":
			sp.Type = TypeJprobe
			if j := strings.IndexByte(rest, ':'); j >= 0 {
				rest, sp.Handler = rest[:j], rest[j+1:]
				if sp.Handler == "" {
					return Spec{}, fmt.Errorf("probe %q: empty jprobe handler", s)
				}
			}
		case kind[0] == 'r' && strings.Trim(kind[1:], "0123456789") == "":
			sp.Type = TypeKretprobe
			if len(kind) > 1 {
				n, err := strconv.Atoi(kind[1:])
				if err != nil || n <= 0 || n > KretprobeMaxActiveMax {
					return Spec{}, fmt.Errorf("probe %q: maxactive must be 1..%d", s, KretprobeMaxActiveMax)
				}
				sp.MaxActive = n
			}
		default:
			// Not a kind: MOD:SYM of a plain kprobe.
			rest = s
		}
		body = rest
	}
	if body == "" {
		return Spec{}, fmt.Errorf("probe %q: no symbol or address", s)
	}
	if a, err := strconv.ParseUint(body, 0, 64); err == nil {
		sp.Addr = a
		return sp, nil
	}
	sp.Symbol = body
	if i := strings.IndexByte(body, '+'); i >= 0 {
		v, err := strconv.ParseUint(body[i+1:], 0, 64)
		if err != nil {
			return Spec{}, fmt.Errorf("probe %q: bad offset: %w", s, err)
		}
		sp.Symbol, sp.Offset = body[:i], v
	}
	if sp.Symbol == "" {
		return Spec{}, fmt.Errorf("probe %q: no symbol", s)
	}
	return sp, nil
}

// String renders the spec back in ParseSpec's syntax.
func (s Spec) String() string {
	var b strings.Builder
	switch s.Type {
	case TypeJprobe:
		b.WriteString("j:")
	case TypeKretprobe:
		b.WriteByte('r')
		if s.MaxActive > 0 {
			fmt.Fprintf(&b, "%d", s.MaxActive)
		}
		b.WriteByte(':')
	}
	if s.Symbol != "" {
		b.WriteString(s.Symbol)
		if s.Offset != 0 {
			fmt.Fprintf(&b, "+%#x", s.Offset)
		}
	} else {
		fmt.Fprintf(&b, "%#x", s.Addr)
	}
	if s.Handler != "" {
		b.WriteString(":" + s.Handler)
	}
	return b.String()
}

// Registered is a probe registered from a Spec, with hit counts.
type Registered struct {
	Spec Spec
	kp   *Kprobe
	rp   *Kretprobe
	jp   *Jprobe
}

// Kprobe returns the kprobe behind the probe (a kretprobe's or jprobe's
// own).
func (r *Registered) Kprobe() *Kprobe {
	switch {
	case r.rp != nil:
		return &r.rp.Kp
	case r.jp != nil:
		return &r.jp.Kp
	}
	return r.kp
}

// Hits counts the probe's hits; for a kretprobe, the function entries.
func (r *Registered) Hits() uint64 { return r.Kprobe().Hits() }

// Missed is nmissed: for a kretprobe, the kprobe's and the kretprobe's.
func (r *Registered) Missed() uint64 {
	n := r.Kprobe().Missed()
	if r.rp != nil {
		n += r.rp.Missed()
	}
	return n
}

// RegisterSpec registers the probe a spec describes, with handlers that
// only count.
func (kp *Kprobes) RegisterSpec(s Spec) (*Registered, error) {
	r := &Registered{Spec: s}
	base := Kprobe{Symbol: s.Symbol, Offset: s.Offset, Addr: s.Addr}
	var err error
	switch s.Type {
	case TypeKretprobe:
		r.rp = &Kretprobe{MaxActive: s.MaxActive}
		r.rp.Kp.Symbol, r.rp.Kp.Offset, r.rp.Kp.Addr = base.Symbol, base.Offset, base.Addr
		err = kp.RegisterKretprobe(r.rp)
	case TypeJprobe:
		r.jp = &Jprobe{Entry: s.Handler}
		r.jp.Kp.Symbol, r.jp.Kp.Offset, r.jp.Kp.Addr = base.Symbol, base.Offset, base.Addr
		if s.Handler == "" {
			r.jp.Handler = func([]JprobeArg, *Regs) {}
		}
		err = kp.RegisterJprobe(r.jp)
	default:
		r.kp = &Kprobe{Symbol: base.Symbol, Offset: base.Offset, Addr: base.Addr}
		err = kp.Register(r.kp)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return r, nil
}

// Unregister removes the probe.
func (kp *Kprobes) UnregisterSpec(r *Registered) {
	switch {
	case r.rp != nil:
		kp.UnregisterKretprobe(r.rp)
	case r.jp != nil:
		kp.UnregisterJprobe(r.jp)
	default:
		kp.Unregister(r.kp)
	}
}
