package tracing_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// run runs the fixture's machine on another goroutine until the test ends.
func (f *fixture) run(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = f.k.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitfor.Recv(t, "the guest to boot", f.k.Ready())
}

// TestModuleEventsAcrossLoads follows the oracle (linux-6.1-oracle.md,
// surprises 4 and 12): MOD:SYM events are accepted before the module
// loads and stay out of kprobes/list, are registered when it comes, turn
// [GONE] when it goes, and come back when it is loaded again; a probe on
// init code enabled before the load hits during init.
func TestModuleEventsAcrossLoads(t *testing.T) {
	f := setup(t)
	f.run(t)
	for _, cmd := range []string{
		"p:modgrp/stats e1000ish:vnet_get_stats64",
		"p:modgrp/init e1000ish:init_module",
		"p:modgrp/nosym e1000ish:no_such_sym",
	} {
		if err := f.write("tracing/kprobe_events", cmd+"\n", false); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	if err := f.write("tracing/events/modgrp/init/enable", "1\n", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "kprobes/list"); got != "" {
		t.Fatalf("list before load = %q", got)
	}
	if err := f.k.LoadEmbeddedModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	stats, _ := f.k.Kallsyms().LookupName("e1000ish:vnet_get_stats64")
	statsLine := fmt.Sprintf("%016x  k  vnet_get_stats64+0x0  e1000ish [DISABLED]\n", stats.Addr)
	// The init probe fired during init; init text is freed once the module
	// is live (with its symbols), so that probe is gone already.
	m, _, _ := f.k.Module("e1000ish")
	var initAddr uint64
	list := f.read(t, "kprobes/list")
	for _, l := range strings.Split(list, "\n") {
		if strings.HasSuffix(l, " [GONE]") {
			fmt.Sscanf(l, "%x", &initAddr)
		}
	}
	if !m.IsInitText(initAddr) {
		t.Errorf("the gone probe at %#x is not in init text", initAddr)
	}
	initGone := fmt.Sprintf("%016x  k  0x%016x [GONE]\n", initAddr, initAddr)
	if !strings.Contains(list, statsLine) || !strings.Contains(list, initGone) || strings.Count(list, "\n") != 2 {
		t.Fatalf("list after load:\n%s\nwant lines\n%s%s", list, statsLine, initGone)
	}
	if prof := f.read(t, "tracing/kprobe_profile"); !strings.Contains(prof, "  init  ") || !hasHits(prof, "init", "1") {
		t.Errorf("init hits, profile:\n%s", prof)
	}
	if err := f.k.UnloadModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	statsGone := fmt.Sprintf("%016x  k  0x%016x [GONE]\n", stats.Addr, stats.Addr)
	if list := f.read(t, "kprobes/list"); !strings.Contains(list, statsGone) {
		t.Fatalf("list after unload:\n%s\nwant %s", list, statsGone)
	}
	// Enabling an event whose probe is gone skips that probe.
	if err := f.write("tracing/events/modgrp/stats/enable", "1\n", true); err != nil {
		t.Fatalf("enable a gone event: %v", err)
	}
	if err := f.write("tracing/events/modgrp/stats/enable", "0\n", true); err != nil {
		t.Fatal(err)
	}
	// Loaded again: registered again, at the same address, not gone.
	if err := f.k.LoadEmbeddedModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	if list := f.read(t, "kprobes/list"); !strings.Contains(list, statsLine) || strings.Contains(list, statsGone) {
		t.Fatalf("list after reload:\n%s", list)
	}
	if got := f.read(t, "tracing/kprobe_events"); !strings.Contains(got, "p:modgrp/stats e1000ish:vnet_get_stats64\n") {
		t.Errorf("kprobe_events = %q", got)
	}
}

func hasHits(profile, event, hits string) bool {
	for _, l := range strings.Split(profile, "\n") {
		fs := strings.Fields(l)
		if len(fs) == 3 && fs[0] == event && fs[1] == hits {
			return true
		}
	}
	return false
}

// TestSymbolArgResolvedAtRegistration: a @SYM fetch argument is looked
// up when the probe registers (traceprobe_update_arg), so a MOD:SYM
// probe whose module is not loaded keeps an unknown @SYM, as the oracle
// kept "p:moddummy dummy:dummy_dev_init x=@nosuch_symbol" with only the
// "might be able to register" warning; when the module comes, the
// unknown symbol fails the re-registration and the probe stays out of
// kprobes/list. A known @SYM+OFF is fetched from SYM's address plus OFF.
func TestSymbolArgResolvedAtRegistration(t *testing.T) {
	f := setup(t)
	f.run(t)
	for _, cmd := range []string{
		"p:modsym e1000ish:vnet_get_stats64 x=@nosuch_symbol",
		"p:word vfs_read x=@vfs_read+4:x32 y=@0x1234",
	} {
		if err := f.write("tracing/kprobe_events", cmd+"\n", false); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	want := "p:kprobes/modsym e1000ish:vnet_get_stats64 x=@nosuch_symbol\np:kprobes/word vfs_read x=@vfs_read+4:x32 y=@0x1234\n"
	if got := f.read(t, "tracing/kprobe_events"); got != want {
		t.Errorf("kprobe_events = %q, want %q", got, want)
	}
	if got := f.read(t, "tracing/error_log"); got != "" {
		t.Errorf("error_log = %q", got)
	}
	if err := f.k.LoadEmbeddedModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	if list := f.read(t, "kprobes/list"); strings.Contains(list, "vnet_get_stats64") {
		t.Errorf("the probe with an unknown @SYM registered:\n%s", list)
	}
	vr, _ := f.k.Kallsyms().LookupName("vfs_read")
	var insn [4]byte
	if err := f.k.ReadMem(vr.Addr+4, insn[:]); err != nil {
		t.Fatal(err)
	}
	for _, w := range [][2]string{{"tracing/events/kprobes/word/enable", "1\n"}} {
		if err := f.write(w[0], w[1], true); err != nil {
			t.Fatal(err)
		}
	}
	wantArg := fmt.Sprintf(" x=0x%x ", uint32(insn[0])|uint32(insn[1])<<8|uint32(insn[2])<<16|uint32(insn[3])<<24)
	waitfor.Until(t, "a word hit", func() bool { return strings.Contains(f.read(t, "tracing/trace"), " word: ") })
	if tr := f.read(t, "tracing/trace"); !strings.Contains(tr, wantArg) {
		t.Errorf("trace has no%q:\n%s", wantArg, tr)
	}
}

// TestOpenatFlagsLargeFile: on a 64-bit kernel openat(2) adds O_LARGEFILE
// (0x20000 on arm64) before do_sys_open builds the open_how, so a probe
// on do_sys_openat2 sees it in how->flags, as the oracle's did:
// "fl=0x20000 mode=0x0" for cat's open, "fl=0x20241 mode=0x1b6" for the
// shell's ">" redirection.
func TestOpenatFlagsLargeFile(t *testing.T) {
	f := setup(t)
	for _, w := range [][2]string{{"tracing/kprobe_events", "p:op do_sys_openat2 fl=+0(%x2):x64 mode=+8(%x2):x64\n"}, {"tracing/events/kprobes/op/enable", "1\n"}} {
		if err := f.write(w[0], w[1], false); err != nil {
			t.Fatal(err)
		}
	}
	f.run(t)
	re := regexp.MustCompile(` op: \(do_sys_openat2\+0x0/0x[0-9a-f]+\) fl=0x([0-9a-f]+) mode=0x[0-9a-f]+\n`)
	var m [][]string
	waitfor.Until(t, "an openat", func() bool {
		m = re.FindAllStringSubmatch(f.read(t, "tracing/trace"), -1)
		return len(m) > 0
	})
	for _, s := range m {
		if fl, _ := strconv.ParseUint(s[1], 16, 64); fl&0x20000 == 0 {
			t.Errorf("flags without O_LARGEFILE: %q", s[0])
		}
	}
}
