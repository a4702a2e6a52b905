package kpemufs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/kpemufs"
)

// TestModulesFile drives kpemu/modules as insmod and rmmod would, with
// the guest running, and checks the errnos of bad writes.
func TestModulesFile(t *testing.T) {
	k, err := kernel.Boot(kernel.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), GuestWait: waitfor.Bound})
	if err != nil {
		t.Fatal(err)
	}
	tree := debugfs.NewTree()
	if err := kpemufs.Register(tree, k); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = k.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitfor.Recv(t, "the guest to boot", k.Ready())
	read := func(p string) string {
		b, err := tree.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Modules go first fit into the module area, a page each.
	e1000 := fmt.Sprintf("e1000ish 4096 0 - Live 0x%016x\n", uint64(kernel.ModulesVaddr))
	ramfs := fmt.Sprintf("ramfs_helper 4096 0 - Live 0x%016x\n", uint64(kernel.ModulesVaddr+4096))
	steps := []struct {
		write string
		err   error
		want  string // kpemu/modules afterwards
	}{
		{"+e1000ish\n", nil, e1000},
		{"+e1000ish\n", syscall.EEXIST, e1000},
		{"+no_such_module\n", syscall.ENOENT, e1000},
		{"e1000ish\n", syscall.EINVAL, e1000},
		{"+\n", syscall.EINVAL, e1000},
		{"+ramfs_helper\n", nil, ramfs + e1000},
		{"-e1000ish\n", nil, ramfs},
		{"-e1000ish\n", syscall.ENOENT, ramfs},
		{"-ramfs_helper\n", nil, ""},
	}
	for _, s := range steps {
		err := tree.WriteFile("kpemu/modules", []byte(s.write), true)
		if s.err == nil && err != nil || s.err != nil && !errors.Is(err, s.err) {
			t.Fatalf("write %q: %v, want %v", s.write, err, s.err)
		}
		if got := read("kpemu/modules"); got != s.want {
			t.Fatalf("after %q: modules = %q, want %q", s.write, got, s.want)
		}
	}
	if err := tree.WriteFile("kpemu/modules", []byte("+e1000ish\n"), true); err != nil {
		t.Fatal(err)
	}
	rx, _ := k.Kallsyms().LookupName("e1000ish:vnet_rx")
	if want := fmt.Sprintf("%016x t vnet_rx\t[e1000ish]\n", rx.Addr); !strings.Contains(read("kpemu/kallsyms"), want) {
		t.Errorf("kallsyms lacks %q", want)
	}
}
