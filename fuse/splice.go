package fuse

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"

	gofuse "github.com/hanwen/go-fuse/v2/fuse"

	"github.com/kpemu/kpemu/debugfs"
)

// Reading through the page cache: sendfile(2), splice(2) and
// copy_file_range(2).
//
// Every open is FOPEN_DIRECT_IO, so read(2), pread(2) and readv(2) reach
// the file's handle directly whatever the file's size. The kernel's
// splice path does not honour FOPEN_DIRECT_IO: it reads through the page
// cache, and only up to the inode's size. A file that reports size 0, as
// every debugfs and tracefs file does, would splice 0 bytes: busybox cat
// and Python's shutil.copyfile, which try sendfile first, would copy
// nothing and report success.
//
// So each open for reading sets the kernel's idea of the size with a
// one-byte cache store at the end of its content (FUSE's NOTIFY_STORE
// extends the size; the open then drops the page it stored): the length
// of the open's snapshot, generated at the open rather than at the first
// read, or, for a random-access file (kpemu/mem), a bound past any
// offset. The reads that fill the page cache (they come without
// FUSE_READ_LOCKOWNER, which every direct read carries) are served from
// the same snapshot. A stream (trace_pipe, trace_pipe_raw) cannot be
// served through the page cache, which would keep its bytes and end it at
// the first short read: there such a read fails with EINVAL, the errno
// Linux's debugfs gives a file without splice_read, and tools fall back
// to read(2). Linux's trace_pipe and trace_pipe_raw do splice, and
// trace-cmd record (libtracefs 1.6) splices trace_pipe_raw without
// falling back: for a process under scripts/kpemu-ns.sh, the seal serves
// that splice through the file's ioctls (Ioctl in nodes.go, package
// internal/splicectl); elsewhere it gets EINVAL, and trace-cmd record
// needs --nosplice.
//
// stat(2) still reports size 0, as debugfs does, except to a process
// that has the file open, which sees its open's length (streams: the
// bound): a stat of size 0 would set the kernel's size back to 0 under
// its sendfile, and Python's copy does fstat before sendfile.

// The sizes an open for reading announces where its content has no
// length: past any offset of a random-access file; one page for a stream
// (enough for the first splice to reach the server and fail; small,
// because a process that fstats its open stream sees it, and Python's
// readall allocates st_size bytes).
const (
	randomAccessBound = 1 << 40
	streamBound       = 4096
)

// splicingFS wraps go-fuse's node file system to tell page-cache reads
// from direct ones, which go-fuse's node API does not show.
type splicingFS struct {
	gofuse.RawFileSystem

	mu      sync.Mutex
	streams map[uint64]struct{} // file handles opened nonseekable: streams
	reads   *readFlagTable      // the mount's: fileHandle.Read looks there
}

func newSplicingFS(fs gofuse.RawFileSystem, reads *readFlagTable) *splicingFS {
	return &splicingFS{RawFileSystem: fs, streams: make(map[uint64]struct{}), reads: reads}
}

// Open records the opens of streams (fileNode.Open makes them
// FOPEN_NONSEEKABLE).
func (s *splicingFS) Open(cancel <-chan struct{}, in *gofuse.OpenIn, out *gofuse.OpenOut) gofuse.Status {
	st := s.RawFileSystem.Open(cancel, in, out)
	if st == gofuse.OK && out.OpenFlags&gofuse.FOPEN_NONSEEKABLE != 0 {
		s.mu.Lock()
		s.streams[out.Fh] = struct{}{}
		s.mu.Unlock()
	}
	return st
}

// Release forgets a stream's handle.
func (s *splicingFS) Release(cancel <-chan struct{}, in *gofuse.ReleaseIn) {
	s.mu.Lock()
	delete(s.streams, in.Fh)
	s.mu.Unlock()
	s.RawFileSystem.Release(cancel, in)
}

// Read refuses to fill the page cache from a stream. A direct read's
// file flags (fuse_read_in.flags, the descriptor's f_flags now, with an
// O_NONBLOCK that fcntl set after the open) are kept by the request's
// cancel channel, which go-fuse hands the node as its context, for
// fileHandle.Read (readFlagTable.withFlags).
func (s *splicingFS) Read(cancel <-chan struct{}, in *gofuse.ReadIn, buf []byte) (gofuse.ReadResult, gofuse.Status) {
	if in.ReadFlags&gofuse.READ_LOCKOWNER == 0 {
		s.mu.Lock()
		_, stream := s.streams[in.Fh]
		s.mu.Unlock()
		if stream {
			return nil, gofuse.EINVAL
		}
	}
	if cancel != nil {
		s.reads.m.Store(cancel, int(in.Flags))
		defer s.reads.m.Delete(cancel)
	}
	return s.RawFileSystem.Read(cancel, in, buf)
}

// readFlagTable maps a mount's read requests in progress (each by its
// cancel channel, unique among the requests in flight) to their file
// flags.
type readFlagTable struct {
	m sync.Map
}

// withFlags returns ctx with the file flags of the FUSE read it serves
// (debugfs.WithReadFlags), when splicingFS.Read saw them.
func (t *readFlagTable) withFlags(ctx context.Context) context.Context {
	c, ok := ctx.(*gofuse.Context) // what go-fuse's bridge passes
	if !ok || c.Cancel == nil {
		return ctx
	}
	if f, ok := t.m.Load(c.Cancel); ok {
		return debugfs.WithReadFlags(ctx, f.(int))
	}
	return ctx
}

// openers are a file's opens for reading, by the process (thread group)
// that opened them, for the size that stat(2) reports to that process.
type openers struct {
	mu    sync.Mutex
	byPid map[uint32][]*fileHandle
}

func (o *openers) add(pid uint32, fh *fileHandle) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byPid == nil {
		o.byPid = make(map[uint32][]*fileHandle)
	}
	o.byPid[pid] = append(o.byPid[pid], fh)
}

func (o *openers) remove(pid uint32, fh *fileHandle) {
	o.mu.Lock()
	defer o.mu.Unlock()
	hs := o.byPid[pid]
	for i, h := range hs {
		if h == fh {
			hs = append(hs[:i], hs[i+1:]...)
			break
		}
	}
	if len(hs) == 0 {
		delete(o.byPid, pid)
	} else {
		o.byPid[pid] = hs
	}
}

func (o *openers) empty() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.byPid) == 0
}

// latest returns pid's most recent open, or nil.
func (o *openers) latest(pid uint32) *fileHandle {
	o.mu.Lock()
	defer o.mu.Unlock()
	hs := o.byPid[pid]
	if len(hs) == 0 {
		return nil
	}
	return hs[len(hs)-1]
}

// announceSize sets the kernel's size of the file for fh, an open for
// reading (see above). It is best effort: without it, sendfile reads 0
// bytes, as it did.
func (n *fileNode) announceSize(ctx context.Context, fh *fileHandle) {
	last := []byte{0}
	end := int64(randomAccessBound)
	if fh.h.Stream() {
		end = streamBound
	} else if size, ok, err := fh.h.Size(ctx); err != nil {
		return // the first read fails the same way
	} else if ok {
		if size == 0 {
			return
		}
		if _, err := fh.h.Read(ctx, last, size-1); err != nil {
			return
		}
		end = size
	}
	if errno := n.WriteCache(end-1, last); errno != 0 {
		n.log.Debug("announcing a size for splice", "file", n.file.Path(), "err", errno)
	}
}

// attrSize is the size stat(2) reports for the file to the caller of
// ctx: 0, as debugfs, unless the caller has it open for reading: then
// its latest open's length. (go-fuse hands Getattr some open of the file
// when the kernel names none, so the caller decides, not that handle.)
func (n *fileNode) attrSize(ctx context.Context) uint64 {
	c, ok := gofuse.FromContext(ctx)
	if !ok {
		return 0
	}
	if n.openers.empty() {
		return 0
	}
	fh := n.openers.latest(tgidOf(c.Pid))
	if fh == nil {
		return 0
	}
	if fh.h.Stream() {
		return streamBound
	}
	size, ok, err := fh.h.Size(ctx)
	if err != nil || !ok {
		// A random-access file (kpemu/mem) has no length; /dev/mem
		// reports 0 too.
		return 0
	}
	return uint64(size)
}

// tgidOf returns the process of thread tid, which FUSE names as the
// caller: another thread of the opener may stat (Go's do).
func tgidOf(tid uint32) uint32 {
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(tid), 10) + "/status")
	if err != nil {
		return tid
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32); err == nil {
				return uint32(n)
			}
		}
	}
	return tid
}
