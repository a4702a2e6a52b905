package machine

import "fmt"

// SMCCC / PSCI function identifiers (Arm DEN0022). 64-bit variants have
// bit 30 set; a 32-bit call takes its arguments from the W registers.
const (
	psciVersion         = 0x84000000
	psciCPUSuspend      = 0x84000001
	psciCPUOff          = 0x84000002
	psciCPUOn           = 0x84000003
	psciAffinityInfo    = 0x84000004
	psciMigrateInfoType = 0x84000006
	psciSystemOff       = 0x84000008
	psciSystemReset     = 0x84000009
	psciFeatures        = 0x8400000a
	psci64              = 0x40000000 // SMC64 calling convention bit

	psciVersion10 = 0x00010000 // major 1, minor 0
)

// PSCI return codes. DENIED (-3) and ON_PENDING (-5) exist too but are
// never returned: CPU_OFF cannot fail and CPU_ON completes at once.
const (
	psciSuccess           = 0
	psciNotSupported      = ^uint64(0)   // -1
	psciInvalidParameters = ^uint64(1)   // -2
	psciAlreadyOn         = ^uint64(3)   // -4
	psciTOSNotPresent     = 2            // MIGRATE_INFO_TYPE: no Trusted OS
	psciAffinityOn        = 0            // AFFINITY_INFO results
	psciAffinityOff       = 1            //
	mpidrAffMask          = 0xff00ffffff // Aff3 and Aff2..Aff0 of an MPIDR
)

// psci implements the firmware side of HVC #0 on c, with results in x0
// following SMCCC. It reports whether c must stop executing: the machine
// powered off, or c powered itself off or suspended.
func (c *CPU) psci() bool {
	m := c.m
	fid := uint32(c.r[0])
	arg := func(i int) uint64 {
		if fid&psci64 == 0 {
			return uint64(uint32(c.r[i]))
		}
		return c.r[i]
	}
	switch fid {
	case psciVersion:
		c.r[0] = psciVersion10
	case psciCPUSuspend, psciCPUSuspend | psci64:
		// Every power state is entered as standby, which PSCI permits
		// (a shallower state than requested): the call returns SUCCESS
		// once the CPU wakes as from WFI.
		c.r[0] = psciSuccess
		m.lockPower()
		c.wfi = true
		m.unlockPower()
		return true
	case psciCPUOff:
		m.log.Debug("machine: PSCI CPU_OFF", "cpu", c.index)
		m.lockPower()
		c.on, c.wfi = false, false
		m.unlockPower()
		m.cpuPowered(c)
		return true
	case psciCPUOn, psciCPUOn | psci64:
		c.r[0] = m.cpuOn(arg(1), arg(2), arg(3))
	case psciAffinityInfo, psciAffinityInfo | psci64:
		c.r[0] = m.affinityInfo(arg(1), arg(2))
	case psciMigrateInfoType:
		c.r[0] = psciTOSNotPresent
	case psciSystemOff:
		m.log.Info("machine: PSCI SYSTEM_OFF", "cpu", c.index, "pc", fmt.Sprintf("%#x", c.pc-4))
		m.powerOff()
		return true
	case psciSystemReset:
		// Reset would need the host to reload the image; stop instead,
		// as QEMU does with -no-reboot.
		m.log.Info("machine: PSCI SYSTEM_RESET treated as power off", "cpu", c.index, "pc", fmt.Sprintf("%#x", c.pc-4))
		m.powerOff()
		return true
	case psciFeatures:
		switch uint32(c.r[1]) {
		case psciVersion, psciCPUSuspend, psciCPUSuspend | psci64, psciCPUOff,
			psciCPUOn, psciCPUOn | psci64, psciAffinityInfo, psciAffinityInfo | psci64,
			psciMigrateInfoType, psciSystemOff, psciSystemReset, psciFeatures:
			c.r[0] = psciSuccess
		default:
			c.r[0] = psciNotSupported
		}
	default:
		// Includes MIGRATE and MIGRATE_INFO_UP_CPU: with no Trusted OS
		// there is nothing to migrate.
		c.r[0] = psciNotSupported
	}
	return false
}

// findCPU returns the CPU whose MPIDR affinity fields equal target, or nil.
func (m *Machine) findCPU(target uint64) *CPU {
	if target&^mpidrAffMask != 0 {
		return nil
	}
	for _, c := range m.cpus {
		if target == uint64(c.index) {
			return c
		}
	}
	return nil
}

// cpuOn implements CPU_ON: the target starts at EL1h with the MMU off,
// DAIF masked, PC=entry and x0=context. The CPU starts at once, so the
// ON_PENDING state is never observed.
func (m *Machine) cpuOn(target, entry, context uint64) uint64 {
	t := m.findCPU(target)
	if t == nil {
		return psciInvalidParameters
	}
	m.lockPower()
	if t.on {
		m.unlockPower()
		return psciAlreadyOn
	}
	m.gic.quiesce(func() {
		t.reset()
		t.on = true
		t.pc = entry
		t.r[0] = context
	})
	m.unlockPower()
	m.log.Debug("machine: PSCI CPU_ON", "cpu", t.index, "entry", fmt.Sprintf("%#x", entry))
	m.cpuPowered(t)
	return psciSuccess
}

// affinityInfo implements AFFINITY_INFO for affinity level 0 (the only
// level with more than one node here).
func (m *Machine) affinityInfo(target, level uint64) uint64 {
	if level != 0 {
		return psciInvalidParameters
	}
	t := m.findCPU(target)
	if t == nil {
		return psciInvalidParameters
	}
	m.lockPower()
	defer m.unlockPower()
	if t.on {
		return psciAffinityOn
	}
	return psciAffinityOff
}

// cpuPowered resynchronizes what other parts of the machine keep about c
// after it was powered on or off: its interrupt lines (reset cleared the
// published level) and, in parallel mode, its goroutine.
func (m *Machine) cpuPowered(c *CPU) {
	m.gic.resync(c.index)
	if m.par != nil {
		m.par.powered(c.index)
	}
}

// powerOff powers the machine off and wakes whatever waits for it.
func (m *Machine) powerOff() {
	m.off.Store(true)
	if m.par != nil {
		m.par.stopAll()
	}
}
