package kprobes_test

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/kpemufs"
	"github.com/kpemu/kpemu/kprobes"
)

// A probe hit while a handler runs on the CPU (here: the guest handler of
// a jprobe) runs no handler and counts as missed.
func TestReentryCountsMissed(t *testing.T) {
	k, kp := boot(t)
	if err := kp.RegisterJprobe(&kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Entry: "jdo_fork"}); err != nil {
		t.Fatal(err)
	}
	var ran bool
	nested := &kprobes.Kprobe{Symbol: "jprobe_example_note", PreHandler: func(*kprobes.Kprobe, *kprobes.Regs) bool { ran = true; return false }}
	if err := kp.Register(nested); err != nil {
		t.Fatal(err)
	}
	runIterations(t, k, 20)
	if nested.Missed() == 0 || ran || nested.Hits() != 0 {
		t.Fatalf("nested probe: missed %d, hits %d, handler ran %v", nested.Missed(), nested.Hits(), ran)
	}
	if calls := counter(t, k, "jdo_fork_calls"); int64(calls)-int64(nested.Missed()) > 1 || calls < nested.Missed() {
		t.Errorf("%d handler calls, %d missed", calls, nested.Missed())
	}
	if msg, ok := k.Panicked(); ok {
		t.Fatal(msg)
	}
}

// What the blacklist prevents: a probe on the break hook of the step
// (kprobe_breakpoint_ss_handler) is hit while an instruction is being
// stepped. Linux cannot recover; the guest says so and BUG()s, and the host
// stays up to report it.
func TestUnrecoverableReentry(t *testing.T) {
	var console bytes.Buffer
	k, err := kernel.Boot(kernel.Config{Logger: quiet(), Console: &console})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := kprobes.New(k, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if err := kp.Register(&kprobes.Kprobe{Symbol: "kprobe_breakpoint_ss_handler"}); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("blacklisted without the unsafe switch: %v", err)
	}
	kp.SetAllowBlacklisted(true)
	for _, s := range []string{"vfs_read", "kprobe_breakpoint_ss_handler"} {
		if err := kp.Register(&kprobes.Kprobe{Symbol: s}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		if err := k.Machine().Step(100_000); err != nil {
			t.Fatal(err)
		}
		if _, ok := k.Panicked(); ok {
			break
		}
	}
	msg, ok := k.Panicked()
	if !ok {
		t.Fatal("the guest did not panic")
	}
	out := console.String()
	for _, want := range []string{"Unrecoverable kprobe detected.", "kernel BUG at"} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	t.Logf("panic: %s", msg)
}

// The functions the guest shares with Linux 6.1 that Linux marks
// NOKPROBE_SYMBOL, __kprobes or noinstr, or keeps in its entry or irq entry
// text, are in kprobes/blacklist and refused with EINVAL.
func TestBlacklistMatchesLinux(t *testing.T) {
	_, kp := boot(t)
	listed := map[string]bool{}
	for _, e := range kp.Blacklist() {
		listed[e.Name] = true
	}
	for _, sym := range []string{
		// NOKPROBE_SYMBOL
		"preempt_count_add", "preempt_count_sub", // kernel/sched/core.c
		"do_mem_abort", "do_sp_pc_abort", "do_debug_exception", // arch/arm64/mm/fault.c
		"call_step_hook", "single_step_handler", "call_break_hook", "brk_handler", // debug-monitors.c
		"do_undefinstr",             // arch/arm64/kernel/traps.c
		"arch_ftrace_ops_list_func", // kernel/trace/ftrace.c
		"kprobe_flush_task",         // kernel/kprobes.c
		// __kprobes
		"do_page_fault", "do_translation_fault",
		"kprobe_breakpoint_handler", "kprobe_breakpoint_ss_handler", "kprobe_fault_handler", "trampoline_probe_handler",
		// noinstr
		"el1h_64_sync_handler", "el1_dbg", "el1_abort", "el0_svc", "exit_to_user_mode", "handle_bad_stack",
		// .entry.text (NOKPROBE in entry.S too) and __irq_entry
		"vectors", "cpu_switch_to", "ret_from_fork", "__bad_stack", "gic_handle_irq",
	} {
		t.Run(sym, func(t *testing.T) {
			if !listed[sym] {
				t.Errorf("%s is not in kprobes/blacklist", sym)
			}
			if err := kp.Register(&kprobes.Kprobe{Symbol: sym}); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("registering a probe on %s: %v, want EINVAL", sym, err)
			}
		})
	}
}

// What the blacklist prevents on the debug exception path itself: a probe
// on do_debug_exception or brk_handler is hit again by the exception of
// every BRK, before any kprobe handler runs, so nothing can detect the
// reentry but the stack running out. As Linux with VMAP_STACK, the entry
// code notices the overflow, moves to the overflow stack and panics with a
// readable report, and the host keeps the guest's log.
func TestDebugPathRecursionOverflowsReadably(t *testing.T) {
	for _, sym := range []string{"do_debug_exception", "brk_handler"} {
		t.Run(sym, func(t *testing.T) {
			var console bytes.Buffer
			k, err := kernel.Boot(kernel.Config{Logger: quiet(), Console: &console})
			if err != nil {
				t.Fatal(err)
			}
			kp, err := kprobes.New(k, quiet())
			if err != nil {
				t.Fatal(err)
			}
			kp.SetAllowBlacklisted(true)
			for _, s := range []string{sym, "vfs_read"} {
				if err := kp.Register(&kprobes.Kprobe{Symbol: s}); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 1000; i++ {
				if _, ok := k.Panicked(); ok {
					break
				}
				if err := k.Machine().Step(100_000); err != nil {
					t.Fatal(err)
				}
			}
			msg, ok := k.Panicked()
			if !ok {
				t.Fatalf("the guest did not panic:\n%s", console.String())
			}
			if msg != "kernel stack overflow" {
				t.Errorf("panic %q, want %q", msg, "kernel stack overflow")
			}
			out := strings.ReplaceAll(console.String(), "\r\n", "\n")
			for _, want := range []string{
				"Insufficient stack space to handle exception!\n",
				"ESR: 0x00000000f2000004 -- BRK (AArch64)\n",
				"Task stack:     [0x",
				"Kernel panic - not syncing: kernel stack overflow\n",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("console lacks %q:\n%s", want, out)
				}
			}
			// The log is text to its end: the recursion did not run over it.
			tree := debugfs.NewTree()
			if err := kpemufs.Register(tree, k); err != nil {
				t.Fatal(err)
			}
			b, err := tree.ReadFile("kpemu/dmesg")
			if err != nil {
				t.Fatal(err)
			}
			dmesg := string(b)
			if !strings.HasSuffix(dmesg, "---[ end Kernel panic - not syncing: kernel stack overflow ]---\n") {
				t.Errorf("dmesg does not end with the panic:\n%q", dmesg)
			}
			for _, r := range dmesg {
				if r != '\n' && (r < ' ' || r > '~') {
					t.Fatalf("dmesg holds %q:\n%q", r, dmesg)
				}
			}
		})
	}
}
