package fuse

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	gofuse "github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/internal/mountinfo"
)

// Taking the mount down, whoever holds it.
//
// A plain unmount fails while a process has a file of the mount open or
// its working directory in it, and go-fuse's serve loop runs until the
// kernel's last reference to the mount is gone: a lazily unmounted tree
// that a reader keeps, or a copy of the mount in another mount namespace
// (any `unshare -m` started while kpemu ran), would keep kpemu waiting
// forever. So Unmount detaches the mount lazily when it must, detaches
// the copies in other namespaces, and then aborts the FUSE connection
// (fusectl's abort), which fails what the remaining holders do with
// ENOTCONN and ends the serve loop.

// graceAfterUnmount is how long the unmount may take to end the serve
// loop before the connection is aborted: the kernel tears a mount that
// nobody holds down at once, and a reader woken at EOF needs a moment to
// close its file.
const graceAfterUnmount = 100 * time.Millisecond

// abortWait bounds the wait for the serve loop after the abort.
const abortWait = 2 * time.Second

// fusectlDir is where the fusectl file system is usually mounted.
const fusectlDir = "/sys/fs/fuse/connections"

// connID is the FUSE connection's number under fusectl: the minor of the
// mount's anonymous device, read from the mount table. Not with stat(2):
// a request from this process to its own mount, caught by a SIGKILL after
// a serve loop took it, is never answered, and the thread that made it
// waits uninterruptibly, holding /dev/fuse open: the process never ends
// and the mount stays dead (a stuck e2e run showed it).
func connID(dir string) (uint32, error) {
	table, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return 0, fmt.Errorf("reading the mount table: %w", err)
	}
	major, minor, ok := mountinfo.Device(string(table), dir)
	if !ok {
		return 0, fmt.Errorf("%s is not in the mount table", dir)
	}
	if major != 0 {
		return 0, fmt.Errorf("%s: device %d:%d is not a FUSE connection", dir, major, minor)
	}
	return minor, nil
}

// waitMount is srv.WaitMount, on a thread of its own that does not hold
// /dev/fuse. WaitMount opens a file of the mount and polls it (go-fuse's
// poll hack: the kernel learns that POLL is not served before this
// process's own opens would ask). A request from this process to its
// own mount that a serve loop has taken is waited for uninterruptibly:
// were kpemu SIGKILLed then, that thread would never end and, as it would
// hold /dev/fuse open, neither would the connection nor the process (a
// stuck e2e run showed it). So the thread unshares its file table and
// closes /dev/fuse in its copy: a SIGKILL then releases the device with
// the other threads, the connection aborts, and the waiting open fails.
// The goroutine exits locked to the thread, which ends with it.
func waitMount(srv *gofuse.Server) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread has a file table of its own
		if err := unix.Unshare(unix.CLONE_FILES); err != nil {
			errc <- fmt.Errorf("unsharing the file table: %w", err)
			return
		}
		if err := closeFuseDevices(); err != nil {
			errc <- err
			return
		}
		errc <- srv.WaitMount()
	}()
	return <-errc
}

// closeFuseDevices closes every /dev/fuse descriptor of the calling
// thread's file table.
func closeFuseDevices() error {
	fds, err := os.ReadDir("/proc/thread-self/fd")
	if err != nil {
		return fmt.Errorf("listing the thread's files: %w", err)
	}
	for _, e := range fds {
		if target, err := os.Readlink("/proc/thread-self/fd/" + e.Name()); err == nil && target == "/dev/fuse" {
			fd, err := strconv.Atoi(e.Name())
			if err == nil {
				_ = unix.Close(fd)
			}
		}
	}
	return nil
}

// teardown unmounts s's mount point, its copies in other mount
// namespaces, and aborts the connection if the serve loop still runs.
func (s *Server) teardown() error {
	if err := unmountDir(s.dir); err != nil {
		return err
	}
	if s.conn != 0 {
		unmountCopies(s.conn, s.log)
	}
	// Readers that Unmount woke (at EOF) close their files now; a mount
	// that nobody else holds ends at once.
	select {
	case <-s.done:
		return nil
	case <-time.After(graceAfterUnmount):
	}
	if s.conn == 0 {
		s.log.Warn("cannot abort the FUSE connection; its holders keep it until they let go")
		return nil
	}
	if err := abortConn(s.conn); err != nil {
		s.log.Warn("cannot abort the FUSE connection; its holders keep it until they let go", "err", err)
		return nil
	}
	select {
	case <-s.done:
	case <-time.After(abortWait):
		s.log.Warn("serve loop still running after the connection was aborted")
	}
	return nil
}

// unmountDir unmounts dir, lazily if a process holds it. Without the
// privilege for umount(2) it uses the fusermount3 helper.
func unmountDir(dir string) error {
	err := unix.Unmount(dir, 0)
	switch {
	case err == nil, errors.Is(err, unix.EINVAL): // EINVAL: no longer mounted
		return nil
	case errors.Is(err, unix.EBUSY):
		if err = unix.Unmount(dir, unix.MNT_DETACH); err == nil {
			return nil
		}
	}
	if _, ferr := exec.Command("fusermount3", "-u", dir).CombinedOutput(); ferr == nil {
		return nil
	}
	if out, ferr := exec.Command("fusermount3", "-u", "-z", dir).CombinedOutput(); ferr != nil {
		return fmt.Errorf("umount %s: %w; fusermount3 -u -z: %w (%s)", dir, err, ferr, bytes.TrimSpace(out))
	}
	return nil
}

// abortConn aborts FUSE connection id through fusectl, mounting fusectl
// in a temporary directory (and taking it down again) where it is not
// mounted.
func abortConn(id uint32) error {
	name := strconv.FormatUint(uint64(id), 10)
	abort := func(dir string) error {
		return os.WriteFile(filepath.Join(dir, name, "abort"), []byte("1"), 0)
	}
	err := abort(fusectlDir)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	tmp, err := os.MkdirTemp("", "kpemu-fusectl")
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := unix.Mount("fusectl", tmp, "fusectl", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount fusectl: %w", err)
	}
	defer unix.Unmount(tmp, unix.MNT_DETACH)
	if err := abort(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil // not there: the connection is gone already
}

// unmountCopies lazily unmounts the copies of connection id's mount that
// other mount namespaces hold, with nsenter(1) and umount(8) (setns into
// a mount namespace needs a single-threaded caller, which a Go process is
// not).
func unmountCopies(id uint32, log *slog.Logger) {
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	seen := map[string]bool{self: true}
	dev := fmt.Sprintf("0:%d", id)
	for _, p := range procs {
		pid := p.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		ns, err := os.Readlink("/proc/" + pid + "/ns/mnt")
		if err != nil || seen[ns] {
			continue
		}
		seen[ns] = true
		for _, mp := range mountsOf("/proc/"+pid+"/mountinfo", dev) {
			out, err := exec.Command("nsenter", "--mount=/proc/"+pid+"/ns/mnt", "--", "umount", "-l", "-i", mp).CombinedOutput()
			if err != nil {
				log.Warn("cannot unmount a copy in another mount namespace", "pid", pid, "dir", mp, "err", err, "output", string(bytes.TrimSpace(out)))
			}
		}
	}
}

// mountsOf returns the mount points of device dev ("0:42") in a
// mountinfo file, deepest first so that nested copies go first.
func mountsOf(table, dev string) []string {
	b, err := os.ReadFile(table)
	if err != nil {
		return nil
	}
	var mps []string
	ms := mountinfo.Parse(string(b))
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Dev == dev {
			mps = append(mps, ms[i].Point)
		}
	}
	return mps
}

// ownerLock is held by the kpemu that serves a mount point, so that a
// second one on the same directory (in the same mount namespace) is
// refused, naming the first, instead of mounting over it. The lock is a
// flock(2), which the kernel drops when its holder dies.
type ownerLock struct{ f *os.File }

// lockDir is where the locks live: /run/kpemu for root, else the
// temporary directory.
func lockDir() string {
	if os.Geteuid() == 0 {
		return "/run/kpemu"
	}
	return filepath.Join(os.TempDir(), "kpemu-"+strconv.Itoa(os.Geteuid()))
}

// lockMountPoint takes dir's lock, or says which process holds it.
func lockMountPoint(dir string) (*ownerLock, error) {
	ns, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		ns = "mnt"
	}
	ldir := lockDir()
	if err := os.MkdirAll(ldir, 0o700); err != nil {
		return nil, fmt.Errorf("lock directory: %w", err)
	}
	name := strings.Trim(strings.NewReplacer("[", "", "]", "", ":", "").Replace(ns), "/") +
		strings.ReplaceAll(dir, "/", "%") + ".lock"
	f, err := os.OpenFile(filepath.Join(ldir, name), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		b, _ := os.ReadFile(f.Name())
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is already served by kpemu (pid %s); stop it first: %w",
				dir, strings.TrimSpace(string(b)), syscall.EBUSY)
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &ownerLock{f: f}, nil
}

// release drops the lock and removes its file.
func (l *ownerLock) release() {
	if l == nil {
		return
	}
	_ = os.Remove(l.f.Name())
	l.f.Close()
}
