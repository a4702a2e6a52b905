package kprobes_test

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// A kprobe on vfs_read: the pre handler sees the arguments in x0..x3
// before the function's first instruction runs; the post handler runs
// after that instruction was stepped out of line.
func ExampleKprobes_Register() {
	k, _ := kernel.Boot(kernel.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	kp, _ := kprobes.New(k, nil)

	var counts []uint64
	p := &kprobes.Kprobe{
		Symbol: "vfs_read",
		PreHandler: func(p *kprobes.Kprobe, regs *kprobes.Regs) bool {
			counts = append(counts, regs.X[2]) // size_t count
			return false                       // go on: step the instruction
		},
	}
	if err := kp.Register(p); err != nil {
		fmt.Println(err)
		return
	}
	for p.Hits() < 3 {
		k.Machine().Step(10_000)
	}
	kp.Unregister(p)
	fmt.Println(len(counts) >= 3, counts[0] > 0)
	fmt.Println(kp.List())
	// Output:
	// true true
	// []
}

// A kretprobe sees what the function returns, and where it returns to.
func ExampleKprobes_RegisterKretprobe() {
	k, _ := kernel.Boot(kernel.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	kp, _ := kprobes.New(k, nil)

	var ret int64
	var caller string
	rp := &kprobes.Kretprobe{
		Kp: kprobes.Kprobe{Symbol: "vfs_read"},
		Handler: func(ri *kprobes.KretprobeInstance, regs *kprobes.Regs) {
			ret = int64(regs.X[0])
			s, _, _ := k.Kallsyms().LookupAddr(ri.RetAddr)
			caller = s.Name
		},
	}
	if err := kp.RegisterKretprobe(rp); err != nil {
		fmt.Println(err)
		return
	}
	for caller == "" {
		k.Machine().Step(10_000)
	}
	fmt.Println(ret >= 0, caller, rp.MaxActive)
	// Output: true workload_run 10
}

// A jprobe with a Go handler gets the probed function's arguments by name
// and type, from the kernel image's DWARF.
func ExampleKprobes_RegisterJprobe() {
	k, _ := kernel.Boot(kernel.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	kp, _ := kprobes.New(k, nil)

	var args []kprobes.JprobeArg
	jp := &kprobes.Jprobe{
		Kp:      kprobes.Kprobe{Symbol: "vfs_write"},
		Handler: func(a []kprobes.JprobeArg, _ *kprobes.Regs) { args = a },
	}
	if err := kp.RegisterJprobe(jp); err != nil {
		fmt.Println(err)
		return
	}
	for args == nil {
		k.Machine().Step(10_000)
	}
	for _, a := range args {
		fmt.Printf("%s %s\n", a.Type, a.Name)
	}
	fmt.Printf("%c %s+%#x\n", kp.List()[0].Type, kp.List()[0].Symbol, kp.List()[0].Offset)
	// Output:
	// struct file * file
	// const char * buf
	// size_t count
	// loff_t * pos
	// j vfs_write+0x0
}
