package kprobes_test

import (
	"fmt"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// A kprobe on vfs_read catches reads by user processes: sh forks and
// execs cat, whose read(2) goes el0_svc -> invoke_syscall ->
// __arm64_sys_read -> ksys_read -> vfs_read. Inside the handler,
// kernel.Current names the user task (comm set by execve) and its pid.
func TestKprobeCatchesUserRead(t *testing.T) {
	for _, ncpu := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dcpu", ncpu), func(t *testing.T) {
			k, err := kernel.Boot(kernel.Config{NumCPUs: ncpu, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			kp, err := kprobes.New(k, quiet())
			if err != nil {
				t.Fatal(err)
			}
			byComm := map[string]int{}
			var userPid int
			p := &kprobes.Kprobe{
				Symbol: "vfs_read",
				PreHandler: func(_ *kprobes.Kprobe, r *kprobes.Regs) bool {
					comm, pid := k.Current(r.CPU)
					byComm[comm]++
					if comm == "cat" {
						userPid = pid
					}
					return false
				},
			}
			if err := kp.Register(p); err != nil {
				t.Fatal(err)
			}
			for i := 0; byComm["cat"] < 3; i++ {
				if i > 400 {
					t.Fatalf("no read by cat after %d steps; reads by %v", i, byComm)
				}
				if err := k.Machine().Step(1_000_000); err != nil {
					t.Fatal(err)
				}
				if msg, ok := k.Panicked(); ok {
					t.Fatalf("guest panicked: %s", msg)
				}
			}
			if userPid <= 1 {
				t.Errorf("cat's pid = %d", userPid)
			}
			if byComm["kworkload"] == 0 {
				t.Errorf("no reads by the kernel workload: %v", byComm)
			}
			t.Logf("vfs_read hits by task: %v", byComm)
		})
	}
}
