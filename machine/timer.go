package machine

import (
	"math"
	"time"
)

// The Arm generic timer: each CPU's EL1 physical timer (CNTP_*) and
// virtual timer (CNTV_*; CNTVOFF is 0 without EL2) drive a private
// peripheral interrupt, level-sensitive, as QEMU virt wires them.
const (
	ppiVirtTimer = 27 // PPI 11
	ppiPhysTimer = 30 // PPI 14

	timerEnable  = 1 << 0 // CNTx_CTL_EL0.ENABLE
	timerIMask   = 1 << 1 // CNTx_CTL_EL0.IMASK
	noDeadline   = math.MaxUint64
	nsPerTick    = 16 // 1e9 / cntFrequency: 62.5 MHz
	timerOutPhys = 1 << 0
	timerOutVirt = 1 << 1
)

// systemCounter returns the value of the system counter (CNTPCT_EL0 and,
// with CNTVOFF 0, CNTVCT_EL0). In deterministic mode it is the number of
// instructions retired by every CPU plus the ticks skipped while all CPUs
// slept (counterSkew); inSlice counts the instructions the running CPU
// retired in its current slice and has not added to the total yet. In
// parallel mode it follows the host's monotonic clock at CNTFRQ.
func (m *Machine) systemCounter(inSlice uint64) uint64 {
	if m.parallel {
		return uint64(time.Since(m.epoch) / nsPerTick)
	}
	return m.instructions.Load() + m.counterSkew.Load() + inSlice
}

// timerState evaluates one timer of c at counter value now: its output
// level (condition met and not masked) and, while the condition is not yet
// met and the output could rise, the counter value at which it will.
func timerState(ctl, cval, now uint64) (out bool, deadline uint64) {
	if ctl&timerEnable == 0 {
		return false, noDeadline
	}
	if now >= cval {
		return ctl&timerIMask == 0, noDeadline
	}
	if ctl&timerIMask != 0 {
		return false, noDeadline
	}
	return false, cval
}

// evalTimer updates the PPIs driven by c's two timers at counter value now
// and returns the earliest future deadline of its unmasked timers.
// The caller runs on the goroutine that owns c (or with the world stopped).
func (m *Machine) evalTimer(c *CPU, now uint64) uint64 {
	pOut, pDead := timerState(c.sys[CNTP_CTL_EL0], c.sys[CNTP_CVAL_EL0], now)
	vOut, vDead := timerState(c.sys[CNTV_CTL_EL0], c.sys[CNTV_CVAL_EL0], now)
	var out uint8
	if pOut {
		out |= timerOutPhys
	}
	if vOut {
		out |= timerOutVirt
	}
	if prev := m.timerOut[c.index]; out != prev {
		m.timerOut[c.index] = out
		if (out^prev)&timerOutPhys != 0 {
			m.gic.setPPI(c.index, ppiPhysTimer, pOut)
		}
		if (out^prev)&timerOutVirt != 0 {
			m.gic.setPPI(c.index, ppiVirtTimer, vOut)
		}
	}
	return min(pDead, vDead)
}

// refreshTimer re-evaluates CPU cpu's timers between slices, on the
// goroutine running that CPU.
func (m *Machine) refreshTimer(cpu int) {
	if cpu < len(m.cpus) {
		m.evalTimer(m.cpus[cpu], m.systemCounter(0))
	}
}

// evalTimers evaluates every CPU's timers and returns the earliest deadline
// (noDeadline if none). Deterministic mode only: it reads every CPU's
// registers.
func (m *Machine) evalTimers() uint64 {
	now := m.systemCounter(0)
	d := min(m.rtc.poll(now), m.bus.poll(now))
	for _, c := range m.cpus {
		if c.on {
			d = min(d, m.evalTimer(c, now))
		} else if m.timerOut[c.index] != 0 {
			// A powered-off CPU's timers drive nothing.
			m.timerOut[c.index] = 0
			m.gic.setPPI(c.index, ppiPhysTimer, false)
			m.gic.setPPI(c.index, ppiVirtTimer, false)
		}
	}
	return d
}

// fastForward skips the system counter to deadline when every CPU sleeps:
// nothing observable happens in between, so jumping is equivalent to
// spinning, and keeps deterministic runs both fast and reproducible. It
// reports whether it skipped. The skipped ticks go to counterSkew, not to
// the instruction count.
func (m *Machine) fastForward(deadline uint64) bool {
	if deadline == noDeadline {
		return false
	}
	now := m.systemCounter(0)
	if deadline <= now {
		return false
	}
	m.counterSkew.Add(deadline - now)
	m.deadline = m.evalTimers()
	return true
}
