package tracing_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
)

// guestProgram reads a guest program's ELF out of the guest's file system.
func guestProgram(t *testing.T, k *kernel.Kernel, path string) *elf.File {
	t.Helper()
	gf, err := k.LookupPath(path)
	if err != nil {
		t.Fatal(err)
	}
	data, size, err := k.FileData(gf.Inode)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, size)
	if err := k.ReadMem(data, b); err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fileOffset is the file offset of symbol name in f, as a uprobe wants it.
func fileOffset(t *testing.T, f *elf.File, name string) (off, vaddr uint64) {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name != name {
			continue
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && s.Value >= p.Vaddr && s.Value < p.Vaddr+p.Filesz {
				return s.Value - p.Vaddr + p.Off, s.Value
			}
		}
	}
	t.Fatalf("no symbol %s", name)
	return 0, 0
}

// brksAt counts the address spaces that map path's page at va and whose
// copy holds BRK #0x005 there, and those that map it at all.
func brksAt(t *testing.T, k *kernel.Kernel, path string, va uint64) (brk, mapped int) {
	t.Helper()
	gf, err := k.LookupPath(path)
	if err != nil {
		t.Fatal(err)
	}
	k.StopMachine(func() {
		mms, err := k.UserMms()
		if err != nil {
			t.Error(err)
			return
		}
		for _, mm := range mms {
			vmas, err := k.MmVMAs(mm)
			if err != nil {
				t.Error(err)
				return
			}
			if !slices.ContainsFunc(vmas, func(v kernel.VMA) bool { return v.File == gf.Inode && va >= v.Start && va < v.End }) {
				continue
			}
			pa, ok, err := k.UserPhys(mm, va)
			if err != nil || !ok {
				continue
			}
			var b [4]byte
			if err := k.ReadPhys(pa, b[:]); err != nil {
				t.Error(err)
				return
			}
			mapped++
			if binary.LittleEndian.Uint32(b[:]) == 0xd42000a0 {
				brk++
			}
		}
	})
	return brk, mapped
}

// guestRuns waits until the guest's clock (its counter, which counts
// retired instructions) has moved on by d.
func guestRuns(t *testing.T, k *kernel.Kernel, d time.Duration) {
	t.Helper()
	start := k.Uptime()
	waitfor.Until(t, fmt.Sprintf("%v of guest time", d), func() bool { return k.Uptime() >= start+d })
}

var profileLine = regexp.MustCompile(`(?m)^  (\S+) (\S+) +(\d+)$`)

func profileHits(t *testing.T, f *fixture, event string) int {
	t.Helper()
	for _, m := range profileLine.FindAllStringSubmatch(f.read(t, "tracing/uprobe_profile"), -1) {
		if m[2] == event {
			n, _ := strconv.Atoi(m[3])
			return n
		}
	}
	return -1
}

// TestUprobeHits places uprobes on /bin/sh's open() (the guest's sh opens
// files every round): the entry event fetches the path from user memory,
// the return event has $retval, uprobe_profile counts, and disabling
// puts the original instruction back in every process.
func TestUprobeHits(t *testing.T) {
	for _, interp := range []bool{false, true} {
		t.Run(fmt.Sprintf("interpret=%v", interp), func(t *testing.T) {
			f := setupInterp(t, interp)
			f.run(t)
			sh := guestProgram(t, f.k, "/bin/sh")
			off, va := fileOffset(t, sh, "open")
			forkOff, _ := fileOffset(t, sh, "fork")
			for _, line := range []string{
				// The child of a fork returns through the trampoline too.
				fmt.Sprintf("r:sh_fork /bin/sh:%#x rv=$retval:s32", forkOff),
				fmt.Sprintf("p:sh_open /bin/sh:%#x path=+0(%%x0):string flags=%%x1 comm=$comm st=$stack0 magic=@+0:u32", off),
				fmt.Sprintf("r:sh_open_ret /bin/sh:%#x rv=$retval:s32", off),
			} {
				if err := f.write("tracing/uprobe_events", line, false); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
			}
			waitfor.Until(t, "init to start /bin/sh", func() bool { _, m := brksAt(t, f.k, "/bin/sh", va); return m > 0 })
			if n, _ := brksAt(t, f.k, "/bin/sh", va); n != 0 {
				t.Fatalf("%d processes have a BRK before the enable", n)
			}
			if err := f.write("tracing/options/stacktrace", "1", true); err != nil {
				t.Fatal(err)
			}
			if err := f.write("tracing/events/uprobes/enable", "1", true); err != nil {
				t.Fatal(err)
			}
			if n, m := brksAt(t, f.k, "/bin/sh", va); n == 0 || n != m {
				t.Errorf("after the enable, %d of the %d processes that map /bin/sh's open have the BRK", n, m)
			}
			waitfor.Until(t, "sh_open_ret and sh_fork hits", func() bool {
				tr := f.read(t, "tracing/trace")
				return strings.Contains(tr, "sh_open_ret:") && strings.Count(tr, "sh_fork:") >= 2
			})
			if err := f.write("tracing/events/uprobes/enable", "0", true); err != nil {
				t.Fatal(err)
			}
			if n, m := brksAt(t, f.k, "/bin/sh", va); n != 0 || m == 0 {
				t.Errorf("after the disable, %d of the %d processes that map /bin/sh's open have the BRK", n, m)
			}
			trace := f.read(t, "tracing/trace")
			entry := regexp.MustCompile(`(?m)^ +sh-(\d+) +\[\d{3}\] \.\.\.\.\. +\d+\.\d{6}: sh_open: \(0x` + strconv.FormatUint(va, 16) +
				`\) path="(/[^"]*)" flags=0x[0-9a-f]+ comm="sh" st=0x[0-9a-f]+ magic=1179403647$`)
			if !entry.MatchString(trace) {
				t.Errorf("no sh_open entry line like Linux's in\n%s", trace)
			}
			ret := regexp.MustCompile(`(?m)^ +sh-\d+ +\[\d{3}\] \.\.\.\.\. +\d+\.\d{6}: sh_open_ret: \(0x[0-9a-f]+ <- 0x` + strconv.FormatUint(va, 16) + `\) rv=-?\d+$`)
			if !ret.MatchString(trace) {
				t.Errorf("no sh_open_ret line like Linux's in\n%s", trace)
			}
			if !strings.Contains(trace, ": sh_fork: (") || !regexp.MustCompile(`sh_fork: \(0x[0-9a-f]+ <- 0x[0-9a-f]+\) rv=0\n`).MatchString(trace) ||
				!regexp.MustCompile(`sh_fork: \(0x[0-9a-f]+ <- 0x[0-9a-f]+\) rv=[1-9]\d*\n`).MatchString(trace) {
				t.Errorf("no sh_fork returns in both the parent and the child:\n%s", trace)
			}
			if strings.Contains(trace, "(fault)") {
				t.Errorf("a fetch faulted:\n%s", trace)
			}
			// The stacktrace option: the kernel's stack where the
			// handler runs, as Linux's, down to the EL0 vector.
			if !regexp.MustCompile(`sh_open: .*\n +sh-\d+ .*: <stack trace>\n( => \S+\n)* => el0_dbg\n => el0t_64_sync_handler\n`).MatchString(f.read(t, "tracing/trace")) {
				t.Errorf("no kernel stack after a sh_open:\n%s", f.read(t, "tracing/trace"))
			}
			hits := profileHits(t, f, "sh_open")
			if hits <= 0 || profileHits(t, f, "sh_open_ret") <= 0 {
				t.Errorf("uprobe_profile:\n%s", f.read(t, "tracing/uprobe_profile"))
			}
			// The guest goes on unharmed: sh keeps opening files, with no
			// more hits counted.
			guestRuns(t, f.k, 50*time.Millisecond)
			if got := profileHits(t, f, "sh_open"); got != hits {
				t.Errorf("hits went on after the disable: %d, then %d", hits, got)
			}
			if msg, dead := f.k.Panicked(); dead {
				t.Fatalf("guest panicked: %s", msg)
			}
			if err := f.write("tracing/uprobe_events", "", true); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// syncBuffer is a guest console the test reads while the guest writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestUprobeToggle enables and disables a uprobe and a uretprobe on
// /bin/sh's fork() over and over on two vCPUs while sh forks (its child
// copies the pages, BRKs and all, and returns through the trampoline):
// no process dies of a BRK or a step it did not expect, and no BRK is
// left anywhere.
func TestUprobeToggle(t *testing.T) {
	var console syncBuffer
	f := setupConfig(t, kernel.Config{NumCPUs: 2, Console: &console})
	f.run(t)
	sh := guestProgram(t, f.k, "/bin/sh")
	off, va := fileOffset(t, sh, "fork")
	for _, line := range []string{
		fmt.Sprintf("p:sh_fork /bin/sh:%#x", off),
		fmt.Sprintf("r:sh_fork_ret /bin/sh:%#x rv=$retval:s32", off),
	} {
		if err := f.write("tracing/uprobe_events", line, false); err != nil {
			t.Fatal(err)
		}
	}
	waitfor.Until(t, "init to start /bin/sh", func() bool { _, m := brksAt(t, f.k, "/bin/sh", va); return m > 0 })
	for i := 0; i < 30; i++ {
		for _, on := range []string{"1", "0"} {
			if err := f.write("tracing/events/uprobes/enable", on, true); err != nil {
				t.Fatal(err)
			}
			guestRuns(t, f.k, 2*time.Millisecond)
		}
	}
	if n, m := brksAt(t, f.k, "/bin/sh", va); n != 0 || m == 0 {
		t.Errorf("after the last disable, %d of the %d processes that map /bin/sh's fork have the BRK", n, m)
	}
	if profileHits(t, f, "sh_fork") <= 0 {
		t.Errorf("no hits:\n%s", f.read(t, "tracing/uprobe_profile"))
	}
	guestRuns(t, f.k, 20*time.Millisecond)
	if msg, dead := f.k.Panicked(); dead {
		t.Fatalf("guest panicked: %s", msg)
	}
	// /bin/segv dies of its SIGSEGV on purpose; nothing else may die.
	for _, line := range strings.Split(console.String(), "\n") {
		if strings.Contains(line, "unhandled") && !strings.Contains(line, " segv[") || strings.Contains(line, "single-step") || strings.Contains(line, "uprobe") {
			t.Errorf("the guest's console: %s", line)
		}
	}
}

// svcOffset is the file offset of the first SVC #0 in f's function name.
func svcOffset(t *testing.T, f *elf.File, name string) uint64 {
	t.Helper()
	off, _ := fileOffset(t, f, name)
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || off < p.Off || off >= p.Off+p.Filesz {
			continue
		}
		b := make([]byte, 64)
		if _, err := p.ReadAt(b, int64(off-p.Off)); err != nil {
			t.Fatal(err)
		}
		for i := 0; i+4 <= len(b); i += 4 {
			if binary.LittleEndian.Uint32(b[i:]) == 0xd4000001 {
				return off + uint64(i)
			}
		}
	}
	t.Fatalf("no svc in %s", name)
	return 0
}

// TestUprobeEnableErrors: an event whose place arm64 cannot probe is
// defined (uprobe_events takes it), but enabling it is EINVAL, with no
// error_log entry, as Linux (the oracle's 6.1): an offset not 4-byte
// aligned or past the file's end (uprobe_register), an instruction arm64
// rejects in a file a process maps (arch_uprobe_analyze_insn: SVC).
func TestUprobeEnableErrors(t *testing.T) {
	f := uprobeFixture(t)
	sh := guestProgram(t, f.k, "/bin/sh")
	_, va := fileOffset(t, sh, "open")
	waitfor.Until(t, "init to start /bin/sh", func() bool { _, m := brksAt(t, f.k, "/bin/sh", va); return m > 0 })
	for _, tt := range []struct {
		name, place string
	}{
		{"misaligned", "/bin/sh:0x16d"},
		{"past the end", "/bin/sh:0x100000000"},
		{"svc", fmt.Sprintf("/bin/sh:%#x", svcOffset(t, sh, "read"))},
	} {
		if err := f.write("tracing/uprobe_events", "p:bad "+tt.place, false); err != nil {
			t.Fatalf("%s: defining: %v", tt.name, err)
		}
		if err := f.write("tracing/events/uprobes/bad/enable", "1", true); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%s: enable = %v, want EINVAL", tt.name, err)
		}
		if got := f.read(t, "tracing/events/uprobes/bad/enable"); got != "0\n" {
			t.Errorf("%s: enable reads %q after the failure", tt.name, got)
		}
		if got := f.read(t, "tracing/error_log"); got != "" {
			t.Errorf("%s: error_log:\n%s", tt.name, got)
		}
		if err := f.write("tracing/uprobe_events", "-:bad", false); err != nil {
			t.Errorf("%s: removing: %v", tt.name, err)
		}
	}
}
