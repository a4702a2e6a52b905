package kernel

import "fmt"

// workloadNoForks is the guest's switch of kworkload's forks
// (init/workload.c).
const workloadNoForks = "workload_no_forks"

// WorkloadForks reports whether the guest's kworkload thread forks its
// two children every iteration (the default).
func (k *Kernel) WorkloadForks() (bool, error) {
	s, ok := k.syms.LookupName(workloadNoForks)
	if !ok {
		return false, fmt.Errorf("the image has no %s", workloadNoForks)
	}
	v, err := k.Read32(s.Addr)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", workloadNoForks, err)
	}
	return v == 0, nil
}

// SetWorkloadForks turns kworkload's forks on or off: off, the guest is
// as quiet as an idle box for the tests that compare two reads of a fork
// histogram. Its other work (file reads and writes, packets, the module
// and tracefs requests it polls for) goes on.
func (k *Kernel) SetWorkloadForks(on bool) error {
	s, ok := k.syms.LookupName(workloadNoForks)
	if !ok {
		return fmt.Errorf("the image has no %s", workloadNoForks)
	}
	var v uint32
	if !on {
		v = 1
	}
	if err := k.Write32(s.Addr, v); err != nil {
		return fmt.Errorf("writing %s: %w", workloadNoForks, err)
	}
	return nil
}
