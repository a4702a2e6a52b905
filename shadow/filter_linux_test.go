//go:build linux && (amd64 || arm64)

package shadow

import (
	"encoding/binary"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// runBPF runs the classic BPF instructions buildFilter emits on d.
func runBPF(t *testing.T, prog []unix.SockFilter, d *seccompData) uint32 {
	t.Helper()
	var buf [64]byte
	binary.LittleEndian.PutUint32(buf[0:], uint32(d.Nr))
	binary.LittleEndian.PutUint32(buf[4:], d.Arch)
	binary.LittleEndian.PutUint64(buf[8:], d.IP)
	for i, a := range d.Args {
		binary.LittleEndian.PutUint64(buf[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(buf[in.K:])
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			if acc == in.K {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			if acc > in.K {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(in.K)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			if acc&in.K != 0 {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("pc %d: unexpected opcode %#x", pc, in.Code)
		}
	}
	t.Fatal("fell off the end of the program")
	return 0
}

func TestFilter(t *testing.T) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		trace = unix.SECCOMP_RET_TRACE
		other = 0x40000003 // a foreign arch (i386)
	)
	prog := buildFilter(nativeAuditArch, hostSyscalls())
	if len(prog) > unix.BPF_MAXINSNS {
		t.Fatalf("%d instructions", len(prog))
	}
	sc := func(nr int, args ...uint64) *seccompData {
		d := &seccompData{Nr: int32(nr), Arch: nativeAuditArch}
		copy(d.Args[:], args)
		return d
	}
	tests := []struct {
		name string
		d    *seccompData
		want uint32
	}{
		{"openat", sc(unix.SYS_OPENAT, 0, 0, 0), trace},
		{"openat2", sc(unix.SYS_OPENAT2), trace},
		{"symlinkat", sc(unix.SYS_SYMLINKAT), trace},
		{"mkdirat", sc(unix.SYS_MKDIRAT), trace},
		{"unlinkat", sc(unix.SYS_UNLINKAT), trace},
		{"clone3", sc(unix.SYS_CLONE3), trace},
		{"clone fork", sc(unix.SYS_CLONE, 0x01200011), trace},
		{"clone vfork", sc(unix.SYS_CLONE, cloneVM|cloneVFork|sigchld), trace},
		{"clone thread", sc(unix.SYS_CLONE, 0x3d0f00), allow},
		{"clone thread, high bits", sc(unix.SYS_CLONE, 0xffffffff_00010000), allow},
		{"kill 0", sc(unix.SYS_KILL, 1234, 0), trace},
		{"kill SIGKILL", sc(unix.SYS_KILL, 1234, 9), trace},
		{"kill SIGTERM", sc(unix.SYS_KILL, 1234, 15), allow},
		{"kill SIGUSR1 to a group", sc(unix.SYS_KILL, 0xfffffffffffffc18, 10), allow},
		{"kill SIGRTMAX", sc(unix.SYS_KILL, 1234, 64), allow},
		{"kill signal 65", sc(unix.SYS_KILL, 1234, 65), trace},
		{"kill signal -1", sc(unix.SYS_KILL, 1234, 0xffffffffffffffff), trace},
		{"ioctl PERF_EVENT_IOC_ENABLE", sc(unix.SYS_IOCTL, 5, 0x2400), trace},
		{"ioctl PERF_EVENT_IOC_ID", sc(unix.SYS_IOCTL, 5, 0x80082407), trace},
		{"ioctl TCGETS", sc(unix.SYS_IOCTL, 0, 0x5401), allow},
		{"ioctl FIONREAD", sc(unix.SYS_IOCTL, 0, 0x541b), allow},
		{"read", sc(unix.SYS_READ), allow},
		{"execve", sc(unix.SYS_EXECVE), allow},
		{"close", sc(unix.SYS_CLOSE), allow},
		{"foreign arch openat", &seccompData{Nr: unix.SYS_OPENAT, Arch: other}, allow},
		{"x32-style number", sc(unix.SYS_OPENAT | 0x40000000), allow},
	}
	for _, c := range hostSyscalls() {
		if c.kind != sysClone && c.kind != sysKill && c.kind != sysIoctl {
			tests = append(tests, struct {
				name string
				d    *seccompData
				want uint32
			}{"table nr " + strconv.Itoa(int(c.nr)), sc(int(c.nr)), trace})
		}
	}
	for _, tt := range tests {
		if got := runBPF(t, prog, tt.d); got != tt.want {
			t.Errorf("%s: filter returns %#x, want %#x", tt.name, got, tt.want)
		}
	}
}
