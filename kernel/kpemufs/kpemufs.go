// Package kpemufs serves the kpemu/ directory of the debugfs tree: what
// kpemu adds to Linux's debugfs so that a shell script can look inside the
// emulated kernel. kallsyms is /proc/kallsyms's format (module symbols
// with their "\t[mod]"), dmesg is the guest's kernel log, mem reads guest
// physical memory at the file offset, like /dev/mem, vmcoreinfo is the
// arm64 VMCOREINFO text Linux puts in a crash dump (OSRELEASE=,
// NUMBER(kimage_voffset)=, ...), with which a script turns a kernel
// image address into a mem offset ($((0x$va - kimage_voffset))), and
// notes is /sys/kernel/notes (the image's ELF notes: its GNU build-id,
// which perf matches a vmlinux against), modules is /proc/modules's
// format, and loads ("+name") and unloads
// ("-name") the image's modules when written, as insmod and rmmod,
// workload_forks turns the guest workload's forks off (0) and on (1), and
// sys/kernel/ holds the guest's tracing sysctls (SysctlDir). None
// of these exist in Linux's debugfs; they live in their own directory so
// that no Linux path changes meaning.
package kpemufs

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/machine"
)

// Register creates kpemu/{kallsyms,dmesg,mem,modules,notes,version,vmcoreinfo,workload_forks}
// and SysctlDir's files in tree.
func Register(tree *debugfs.Tree, k *kernel.Kernel) error {
	dir, err := tree.MkdirAll("kpemu", 0o755)
	if err != nil {
		return fmt.Errorf("creating kpemu/: %w", err)
	}
	files := []struct {
		name string
		ops  debugfs.FileOps
	}{
		{"kallsyms", debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { showKallsyms(w, k); return nil }}},
		{"dmesg", debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { return showDmesg(w, k) }}},
		{"version", debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { return showVersion(w, k) }}},
		{"vmcoreinfo", debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { return showVmcoreinfo(w, k) }}},
		{"notes", debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { return showNotes(w, k) }}},
		{"mem", debugfs.FileOps{Seekable: true, Read: func(_ context.Context, p []byte, off int64) (int, error) { return readMem(k, p, off) }}},
	}
	for _, f := range files {
		if _, err := dir.CreateFile(f.name, 0o400, f.ops); err != nil {
			return fmt.Errorf("creating kpemu/%s: %w", f.name, err)
		}
	}
	mods := debugfs.FileOps{
		Show:  func(_ context.Context, w *bytes.Buffer) error { showModules(w, k); return nil },
		Write: func(_ context.Context, p []byte, _ int64) (int, error) { return writeModules(k, p) },
	}
	if _, err := dir.CreateFile("modules", 0o600, mods); err != nil {
		return fmt.Errorf("creating kpemu/modules: %w", err)
	}
	forks := debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			on, err := k.WorkloadForks()
			if err != nil {
				return fmt.Errorf("%w: %w", syscall.ENODEV, err)
			}
			if on {
				w.WriteString("1\n")
			} else {
				w.WriteString("0\n")
			}
			return nil
		},
		Write: func(_ context.Context, p []byte, _ int64) (int, error) { return writeWorkloadForks(k, p) },
	}
	if _, err := dir.CreateFile("workload_forks", 0o644, forks); err != nil {
		return fmt.Errorf("creating kpemu/workload_forks: %w", err)
	}
	return registerSysctls(tree, k.SetFtraceEnabled)
}

// showNotes is /sys/kernel/notes: the bytes of the image's .notes,
// __start_notes..__stop_notes, as kernel/ksysfs.c's notes_read gives them.
func showNotes(w *bytes.Buffer, k *kernel.Kernel) error {
	start, ok1 := k.Kallsyms().LookupName("__start_notes")
	stop, ok2 := k.Kallsyms().LookupName("__stop_notes")
	if !ok1 || !ok2 || stop.Addr < start.Addr || stop.Addr-start.Addr > 4096 {
		return fmt.Errorf("%w: the image has no notes", syscall.ENOENT)
	}
	b := make([]byte, stop.Addr-start.Addr)
	if err := k.ReadMem(start.Addr, b); err != nil {
		return fmt.Errorf("reading the notes: %w", err)
	}
	w.Write(b)
	return nil
}

// showModules is /proc/modules: newest first.
func showModules(w *bytes.Buffer, k *kernel.Kernel) {
	for _, m := range k.Modules() {
		w.WriteString(m.String())
	}
}

// writeModules runs one command per line: "+name" loads the image's
// module name (insmod), "-name" unloads it (rmmod). Errors are the
// errnos: ENOENT for an unknown or unloaded module, EEXIST for a loaded
// one, EINVAL for a malformed command or object, init_module's own errno.
// The write stops at the first error, as kprobe_events does.
func writeModules(k *kernel.Kernel, p []byte) (int, error) {
	for _, line := range strings.Split(string(p), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := strings.TrimSpace(line[1:])
		if name == "" {
			return 0, fmt.Errorf("%w: no module name in %q", syscall.EINVAL, line)
		}
		var err error
		switch line[0] {
		case '+':
			err = k.LoadEmbeddedModule(name)
		case '-':
			err = k.UnloadModule(name)
		default:
			err = fmt.Errorf("%w: %q: write +NAME to load, -NAME to unload", syscall.EINVAL, line)
		}
		if err != nil {
			k.Logger().Warn("kpemu/modules", "command", line, "err", err)
			return 0, err
		}
	}
	return len(p), nil
}

func showKallsyms(w *bytes.Buffer, k *kernel.Kernel) {
	for _, s := range k.Kallsyms().Symbols() {
		if s.Module != "" {
			fmt.Fprintf(w, "%016x %c %s\t[%s]\n", s.Addr, s.Type, s.Name, s.Module)
		} else {
			fmt.Fprintf(w, "%016x %c %s\n", s.Addr, s.Type, s.Name)
		}
	}
}

// showDmesg copies the guest's printk ring (__log_buf, log_next_idx).
func showDmesg(w *bytes.Buffer, k *kernel.Kernel) error {
	buf, ok := k.Kallsyms().LookupName("__log_buf")
	if !ok || buf.ObjSize == 0 {
		return fmt.Errorf("%w: the guest image has no __log_buf", syscall.ENODEV)
	}
	next, err := k.ReadSymbolU64("log_next_idx")
	if err != nil {
		return fmt.Errorf("%w: %w", syscall.EIO, err)
	}
	size := buf.ObjSize
	data := make([]byte, size)
	if err := k.ReadMem(buf.Addr, data); err != nil {
		return fmt.Errorf("%w: %w", syscall.EIO, err)
	}
	if next <= size {
		w.Write(data[:next])
		return nil
	}
	head := next % size
	w.Write(data[head:])
	w.Write(data[:head])
	return nil
}

// utsLen is the size of each of struct new_utsname's strings.
const utsLen = 65

// utsname reads init_uts_ns's struct new_utsname: sysname, nodename,
// release, version, machine, domainname.
func utsname(k *kernel.Kernel) ([6]string, error) {
	var out [6]string
	uts, ok := k.Kallsyms().LookupName("init_uts_ns")
	if !ok {
		return out, fmt.Errorf("%w: the guest image has no init_uts_ns", syscall.ENODEV)
	}
	name := make([]byte, len(out)*utsLen)
	if err := k.ReadMem(uts.Addr, name); err != nil {
		return out, fmt.Errorf("%w: %w", syscall.EIO, err)
	}
	for i := range out {
		f := name[i*utsLen : (i+1)*utsLen]
		if n := bytes.IndexByte(f, 0); n >= 0 {
			f = f[:n]
		}
		out[i] = string(f)
	}
	return out, nil
}

// showVersion is the guest's /proc/version (version_proc_show):
// linux_proc_banner formatted with init_uts_ns's sysname, release and
// version, all read from guest memory. Bind it over /proc/version for
// tests that compare the guest's banner with it.
func showVersion(w *bytes.Buffer, k *kernel.Kernel) error {
	format, err := readCString(k, "linux_proc_banner", 256)
	if err != nil {
		return err
	}
	uts, err := utsname(k)
	if err != nil {
		return err
	}
	args := []string{uts[0], uts[2], uts[3]} // sysname, release, version
	for i := 0; i < len(format); i++ {
		if format[i] == '%' && i+1 < len(format) && format[i+1] == 's' && len(args) > 0 {
			w.WriteString(args[0])
			args = args[1:]
			i++
			continue
		}
		w.WriteByte(format[i])
	}
	return nil
}

// showVmcoreinfo is the VMCOREINFO text of Linux 6.1 on arm64
// (crash_save_vmcoreinfo_init, then arch_crash_save_vmcoreinfo), in its
// printf formats, limited to what describes the kernel's address space:
// with it a script finds the physical address of a kernel address, as
// crash and makedumpfile do. Lines Linux prints about structures this
// kernel lacks (mem_section, vmalloc, vmemmap) are left out.
func showVmcoreinfo(w *bytes.Buffer, k *kernel.Kernel) error {
	uts, err := utsname(k)
	if err != nil {
		return err
	}
	syms := k.Kallsyms()
	symbol := func(name string) {
		if s, ok := syms.LookupName(name); ok {
			fmt.Fprintf(w, "SYMBOL(%s)=%x\n", name, s.Addr) // VMCOREINFO_SYMBOL: %lx
		}
	}
	fmt.Fprintf(w, "OSRELEASE=%s\n", uts[2])
	fmt.Fprintf(w, "PAGESIZE=%d\n", machine.PageSize)
	symbol("init_uts_ns")
	symbol("swapper_pg_dir")
	symbol("_stext")
	// arch/arm64/kernel/crash_core.c; NUMBER() is %ld, the rest 0x%lx.
	fmt.Fprintf(w, "NUMBER(VA_BITS)=%d\n", kernel.VABits)
	fmt.Fprintf(w, "NUMBER(MODULES_VADDR)=0x%x\n", uint64(kernel.ModulesVaddr))
	fmt.Fprintf(w, "NUMBER(MODULES_END)=0x%x\n", uint64(kernel.ModulesEnd))
	fmt.Fprintf(w, "NUMBER(kimage_voffset)=0x%x\n", k.Layout().KimageVoffset)
	fmt.Fprintf(w, "NUMBER(PHYS_OFFSET)=0x%x\n", uint64(kernel.PhysOffset))
	// No KASLR: the image runs where it is linked.
	fmt.Fprintf(w, "KERNELOFFSET=%x\n", 0)
	return nil
}

// readCString reads the NUL-terminated string at symbol sym.
func readCString(k *kernel.Kernel, sym string, limit int) (string, error) {
	s, ok := k.Kallsyms().LookupName(sym)
	if !ok {
		return "", fmt.Errorf("%w: the guest image has no %s", syscall.ENODEV, sym)
	}
	str, err := k.ReadString(s.Addr, limit)
	if err != nil {
		return "", fmt.Errorf("%w: %w", syscall.EIO, err)
	}
	return str, nil
}

// readMem reads guest physical memory at off; past RAM it is EOF. It is
// physical, like /dev/mem: kernel addresses are virtual, and vmcoreinfo's
// kimage_voffset turns an image address into an offset here.
func readMem(k *kernel.Kernel, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	m := k.Machine()
	// Shrink the read until it fits in RAM; a read starting past RAM is
	// EOF, below RAM an I/O error, like /dev/mem on a hole.
	n := len(p)
	for n > 0 {
		if err := m.ReadMem(uint64(off), p[:n]); err == nil {
			return n, nil
		}
		n /= 2
	}
	if uint64(off) >= machine.RAMBase {
		return 0, nil
	}
	return 0, syscall.EIO
}

// writeWorkloadForks is kpemu/workload_forks' write: 1 (or any non-zero
// number) lets kworkload fork, 0 stops its forks; anything else is EINVAL
// and changes nothing.
func writeWorkloadForks(k *kernel.Kernel, p []byte) (int, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(string(p)), 0, 32)
	if err != nil {
		return 0, syscall.EINVAL
	}
	if err := k.SetWorkloadForks(v != 0); err != nil {
		return 0, fmt.Errorf("%w: %w", syscall.ENODEV, err)
	}
	return len(p), nil
}
