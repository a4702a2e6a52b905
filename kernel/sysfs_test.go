package kernel_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/image"
)

// The guest has sysfs show functions named as Linux's, and two of them
// are static name_show (kernel/irq/irqdesc.c, drivers/rtc/sysfs.c), so
// kallsyms lists more than one local "t name_show", which Linux's
// kselftest kprobe_non_uniq_symbol needs.
func TestSysfsShowSymbols(t *testing.T) {
	k := boot(t)
	var local int
	for _, s := range k.Kallsyms().Lookup("name_show") {
		if s.Type != 't' || s.Module != "" {
			t.Errorf("name_show at %#x: type %c module %q, want a local text symbol of the kernel", s.Addr, s.Type, s.Module)
		}
		local++
	}
	if local < 2 {
		t.Errorf("%d name_show symbols, want at least 2", local)
	}
	for _, name := range []string{"per_cpu_count_show", "chip_name_show", "hwirq_show", "type_show",
		"wakeup_show", "actions_show", "date_show", "time_show", "since_epoch_show", "pl031_read_time"} {
		if syms := k.Kallsyms().Lookup(name); len(syms) != 1 || syms[0].Type != 't' {
			t.Errorf("%s: %+v, want one local text symbol", name, syms)
		}
	}
}

// sysfsLine matches one "grep ." line that /init prints at start.
var sysfsLine = regexp.MustCompile(`(?m)^(/sys/[^:\r\n]+):([^\r\n]*)\r?$`)

// /init prints /sys/class/rtc/rtc0/{name,date,time,since_epoch} and every
// attribute of /sys/kernel/irq/<irq>/ as "grep ." would (16-byte reads,
// through the /sys/class/rtc/rtc0 symlink): the PL031's driver found the
// device in the device tree, registered rtc0 and requested its interrupt
// (34, SPI 2), and so did kpemu's shadow device for the doorbell's (41,
// SPI 9); the files read what Linux 6.1's print. sh then reads
// them every 8th round without a failed read.
func TestSysfsRTCAndIRQ(t *testing.T) {
	for _, ncpu := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dcpu", ncpu), func(t *testing.T) {
			con := &syncBuffer{}
			k, err := kernel.Boot(kernel.Config{NumCPUs: ncpu, Console: con, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			step := func(until func() bool, what string) {
				t.Helper()
				for steps := 0; !until(); steps += 1_000_000 {
					if steps > 300_000_000 {
						t.Fatalf("no %s after %d instructions:\n%s", what, steps, con.String())
					}
					if err := k.Machine().Step(1_000_000); err != nil {
						t.Fatal(err)
					}
					if msg, ok := k.Panicked(); ok {
						t.Fatalf("guest panicked: %s\n%s", msg, con.String())
					}
				}
			}
			step(func() bool { return strings.Contains(con.String(), "/sys/kernel/irq/41/actions:") },
				"sysfs lines from /init")
			uptime := k.Uptime()
			out := con.String()
			if !regexp.MustCompile(`(?m)^\[ *\d+\.\d{6}\] rtc-pl031 9010000\.pl031: registered as rtc0\r?$`).MatchString(out) {
				t.Errorf("console lacks the registration message:\n%s", out)
			}
			got := map[string]string{}
			var order []string
			for _, m := range sysfsLine.FindAllStringSubmatch(out, -1) {
				got[m[1]] = m[2]
				order = append(order, m[1])
			}
			cpus := strings.TrimSuffix(strings.Repeat("0,", ncpu), ",")
			want := []struct{ file, text string }{
				{"/sys/class/rtc/rtc0/name", "rtc-pl031 9010000.pl031"},
				{"/sys/class/rtc/rtc0/date", "2000-01-01"}, // machine's default epoch, plus well under a day
				{"/sys/class/rtc/rtc0/time", ""},
				{"/sys/class/rtc/rtc0/since_epoch", ""},
				{"/sys/kernel/irq/34/per_cpu_count", cpus},
				{"/sys/kernel/irq/34/hwirq", "34"},
				{"/sys/kernel/irq/34/type", "level"},
				{"/sys/kernel/irq/34/wakeup", "disabled"},
				{"/sys/kernel/irq/34/actions", "rtc-pl031"},
				{"/sys/kernel/irq/41/per_cpu_count", ""},
				{"/sys/kernel/irq/41/hwirq", "41"},
				{"/sys/kernel/irq/41/type", "level"},
				{"/sys/kernel/irq/41/wakeup", "disabled"},
				{"/sys/kernel/irq/41/actions", "kpemu-doorbell"},
			}
			var wantOrder []string
			for _, w := range want {
				wantOrder = append(wantOrder, w.file)
				if v, ok := got[w.file]; !ok || (w.text != "" && v != w.text) {
					t.Errorf("%s: %q (present %v), want %q", w.file, v, ok, w.text)
				}
			}
			// chip_name (the GIC's chip has no name, as Linux's EOImode 0
			// gic_chip) and name (no flow handler name) are empty: no line.
			if strings.Join(order, " ") != strings.Join(wantOrder, " ") {
				t.Errorf("sysfs lines:\n%s\nwant the files\n%s", strings.Join(order, "\n"), strings.Join(wantOrder, "\n"))
			}

			// The RTC counts from 2000-01-01 00:00:00 UTC at counter zero;
			// date, time and since_epoch are three reads, a few
			// instructions apart, of one clock.
			since, err := strconv.ParseInt(got["/sys/class/rtc/rtc0/since_epoch"], 10, 64)
			if err != nil {
				t.Fatalf("since_epoch: %v", err)
			}
			epoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
			if s := time.Unix(since, 0).UTC(); s.Before(epoch) || s.After(epoch.Add(uptime+time.Second)) {
				t.Errorf("since_epoch %d (%v): not within the guest's %v of uptime since %v", since, s, uptime, epoch)
			}
			dt, err := time.Parse("2006-01-02 15:04:05", got["/sys/class/rtc/rtc0/date"]+" "+got["/sys/class/rtc/rtc0/time"])
			if err != nil {
				t.Fatalf("date and time: %v", err)
			}
			if d := since - dt.Unix(); d < 0 || d > 1 {
				t.Errorf("date %s time %s is %d s off since_epoch %d", got["/sys/class/rtc/rtc0/date"],
					got["/sys/class/rtc/rtc0/time"], d, since)
			}

			// sh keeps reading them (name_show of both kinds among them).
			shows := symU64(t, k, "nr_sysfs_shows")
			step(func() bool { return symU64(t, k, "nr_sysfs_shows") >= shows+2*(2+7) }, "sysfs reads from sh")
			if out := con.String(); strings.Contains(out, "sh: cannot read") {
				t.Errorf("sh failed to read sysfs:\n%s", out)
			}
		})
	}
}

// flatImage is the ELF as an arm64 Image (what objcopy -O binary makes):
// its loadable bytes from the lowest physical address, the Image header
// first. QEMU boots that as Linux, with its device tree in x0.
func flatImage(t *testing.T, img []byte) []byte {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	var lo, hi uint64 = ^uint64(0), 0
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Filesz > 0 {
			lo, hi = min(lo, p.Paddr), max(hi, p.Paddr+p.Filesz)
		}
	}
	out := make([]byte, hi-lo)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Filesz > 0 {
			if _, err := p.ReadAt(out[p.Paddr-lo:p.Paddr-lo+p.Filesz], 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// Under QEMU's virt board, booted as an Image so that QEMU passes its own
// device tree, the PL031 driver finds QEMU's PL031 (at the same address,
// with the same interrupt) and rtc0 reads the host's clock, UTC. Skipped
// without qemu-system-aarch64, unless CI is set.
func TestQEMUSysfsRTC(t *testing.T) {
	if testing.Short() {
		t.Skip("boots QEMU")
	}
	qemu, err := exec.LookPath("qemu-system-aarch64")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but qemu-system-aarch64 is missing")
		}
		t.Skip("qemu-system-aarch64 not installed")
	}
	path := t.TempDir() + "/Image"
	if err := os.WriteFile(path, flatImage(t, image.ELF()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, "-M", "virt", "-cpu", "cortex-a57", "-smp", "2",
		"-m", "128", "-nographic", "-nic", "none", "-no-reboot", "-kernel", path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	defer cancel()
	got := map[string]string{}
	var con strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		con.WriteString(line + "\n")
		if m := sysfsLine.FindStringSubmatch(line); m != nil {
			got[m[1]] = m[2]
			if m[1] == "/sys/kernel/irq/34/actions" {
				break
			}
		}
	}
	now := time.Now().Unix()
	for file, want := range map[string]string{
		"/sys/class/rtc/rtc0/name":         "rtc-pl031 9010000.pl031",
		"/sys/kernel/irq/34/per_cpu_count": "0,0",
		"/sys/kernel/irq/34/hwirq":         "34",
		"/sys/kernel/irq/34/type":          "level",
		"/sys/kernel/irq/34/actions":       "rtc-pl031",
	} {
		if got[file] != want {
			t.Errorf("%s: %q, want %q", file, got[file], want)
		}
	}
	since, err := strconv.ParseInt(got["/sys/class/rtc/rtc0/since_epoch"], 10, 64)
	if err != nil || since < now-120 || since > now+5 {
		t.Errorf("since_epoch %q (%v), want the host's time %d", got["/sys/class/rtc/rtc0/since_epoch"], err, now)
	}
	// date was read just before since_epoch: a second earlier at most
	day := func(s int64) string { return time.Unix(s, 0).UTC().Format("2006-01-02") }
	if d := got["/sys/class/rtc/rtc0/date"]; err == nil && d != day(since) && d != day(since-2) {
		t.Errorf("date %q, want %q", d, day(since))
	}
	if t.Failed() {
		t.Logf("console:\n%s", con.String())
	}
}
