package fuse

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	gofuse "github.com/hanwen/go-fuse/v2/fuse"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/internal/splicectl"
)

// dirNode serves a debugfs.Dir. Its children are not kept in go-fuse's
// inode tree beyond what the kernel looks up: every Lookup and Readdir
// asks the debugfs tree, so directories added and removed at run time show
// at once (the mount sets all kernel cache timeouts to 0).
type dirNode struct {
	gofs.Inode
	dir *debugfs.Dir
	log *slog.Logger
	// stop is done when the server starts to unmount: blocked stream
	// reads then end (see fileHandle.Read).
	stop context.Context
	// mount is the state the mount's nodes share.
	mount *mountState
}

// mountState is what one mount's nodes and its splicingFS share: the
// mkdirs and rmdirs under way and the file flags of the reads in flight.
type mountState struct {
	serving dirOpSet
	reads   readFlagTable // see splice.go
}

// dirOpSet is the entries whose mkdir or rmdir a mount is serving. The
// kernel holds the parent directory's lock until it has the reply, so
// the tree's removal of such an entry (the rmdir itself, a mkdir that
// fails half way) must not be notified to it: the notification would wait
// for that lock, which waits for the reply. Nor need it be: the kernel
// updates its entry from the reply.
type dirOpSet struct {
	mu sync.Mutex
	m  map[dirOpKey]int
}

type dirOpKey struct {
	parent *debugfs.Dir
	name   string
}

func (s *dirOpSet) begin(parent *debugfs.Dir, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[dirOpKey]int{}
	}
	s.m[dirOpKey{parent, name}]++
}

func (s *dirOpSet) end(parent *debugfs.Dir, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := dirOpKey{parent, name}
	if s.m[k]--; s.m[k] <= 0 {
		delete(s.m, k)
	}
}

// has reports whether the mount is serving a mkdir or rmdir of name in
// parent.
func (s *dirOpSet) has(parent *debugfs.Dir, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[dirOpKey{parent, name}] > 0
}

var (
	_ = (gofs.NodeLookuper)((*dirNode)(nil))
	_ = (gofs.NodeReaddirer)((*dirNode)(nil))
	_ = (gofs.NodeGetattrer)((*dirNode)(nil))
	_ = (gofs.NodeSetattrer)((*dirNode)(nil))
	_ = (gofs.NodeCreater)((*dirNode)(nil))
	_ = (gofs.NodeMkdirer)((*dirNode)(nil))
	_ = (gofs.NodeMknoder)((*dirNode)(nil))
	_ = (gofs.NodeSymlinker)((*dirNode)(nil))
	_ = (gofs.NodeLinker)((*dirNode)(nil))
	_ = (gofs.NodeUnlinker)((*dirNode)(nil))
	_ = (gofs.NodeRmdirer)((*dirNode)(nil))
	_ = (gofs.NodeRenamer)((*dirNode)(nil))
)

// newChild wraps a debugfs node as a go-fuse inode under parent. The
// debugfs inode number is the go-fuse key, so concurrent lookups of one
// node share an inode, and a directory re-created under an old name (a new
// debugfs node, a new number) is a new inode.
func newChild(ctx context.Context, parent *gofs.Inode, n debugfs.Node, log *slog.Logger, stop context.Context, ms *mountState) *gofs.Inode {
	stable := gofs.StableAttr{Ino: n.Ino()}
	var ops gofs.InodeEmbedder
	switch n := n.(type) {
	case *debugfs.Dir:
		stable.Mode = syscall.S_IFDIR
		ops = &dirNode{dir: n, log: log, stop: stop, mount: ms}
	case *debugfs.File:
		stable.Mode = syscall.S_IFREG
		ops = &fileNode{file: n, log: log, stop: stop, mount: ms}
	}
	return parent.NewInode(ctx, ops, stable)
}

// How long the kernel may keep what it was told. Entries stay until the
// tree removes them (invalidate); the bound only limits the harm of a
// removal made while no server watched. A directory's attributes (its
// mode) change only by chmod, which the kernel applies itself.
const (
	entryTimeout   = time.Minute
	dirAttrTimeout = time.Second
)

// invalidate drops the kernel's entry for name in parent, a node the tree
// removed, if the kernel knows it: go-fuse's inode tree below root (the
// mount's root, at tree path rootPath) holds what it looked up.
func invalidate(root *gofs.Inode, rootPath string, parent *debugfs.Dir, name string) {
	rel, ok := strings.CutPrefix(parent.Path(), rootPath)
	if !ok {
		return
	}
	ino := root
	for _, c := range strings.Split(rel, "/") {
		if c == "" {
			continue
		}
		if ino = ino.GetChild(c); ino == nil {
			return
		}
	}
	if ino.GetChild(name) != nil {
		_ = ino.NotifyEntry(name) // ENOENT: the kernel dropped it already
	}
}

// fillAttr reports n as debugfs does: owned by root, size 0, the tree's
// mode and creation time.
func fillAttr(n debugfs.Node, out *gofuse.Attr) {
	mode := n.Mode()
	out.Mode = uint32(mode.Perm())
	out.Nlink = 1
	if mode.IsDir() {
		out.Mode |= syscall.S_IFDIR
		out.Nlink = 2
	} else {
		out.Mode |= syscall.S_IFREG
	}
	out.Ino = n.Ino()
	out.Size = 0
	out.Blocks = 0
	out.Owner = gofuse.Owner{Uid: 0, Gid: 0}
	t := n.ModTime()
	out.SetTimes(&t, &t, &t)
}

// Lookup implements gofs.NodeLookuper.
func (d *dirNode) Lookup(ctx context.Context, name string, out *gofuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	c, err := d.dir.Lookup(name)
	if err != nil {
		return nil, toErrno(d.log, "lookup", err)
	}
	fillAttr(c, &out.Attr)
	if c.Mode().IsDir() {
		out.SetAttrTimeout(dirAttrTimeout)
	}
	ch := newChild(ctx, d.EmbeddedInode(), c, d.log, d.stop, d.mount)
	if f, ok := ch.Operations().(*fileNode); ok {
		out.Attr.Size = f.attrSize(ctx)
	}
	return ch, 0
}

// Readdir implements gofs.NodeReaddirer.
func (d *dirNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	children := d.dir.Children()
	entries := make([]gofuse.DirEntry, 0, len(children))
	for _, c := range children {
		mode := uint32(syscall.S_IFREG)
		if c.Mode().IsDir() {
			mode = syscall.S_IFDIR
		}
		entries = append(entries, gofuse.DirEntry{Name: c.Name(), Ino: c.Ino(), Mode: mode})
	}
	return gofs.NewListDirStream(entries), 0
}

// Getattr implements gofs.NodeGetattrer.
func (d *dirNode) Getattr(ctx context.Context, f gofs.FileHandle, out *gofuse.AttrOut) syscall.Errno {
	fillAttr(d.dir, &out.Attr)
	out.SetTimeout(dirAttrTimeout)
	return 0
}

// Setattr implements gofs.NodeSetattrer: chmod changes the tree's mode;
// owner and time changes are accepted and ignored (debugfs reports root
// and creation times).
func (d *dirNode) Setattr(ctx context.Context, f gofs.FileHandle, in *gofuse.SetAttrIn, out *gofuse.AttrOut) syscall.Errno {
	if errno := setMode(d.log, d.dir, in); errno != 0 {
		return errno
	}
	fillAttr(d.dir, &out.Attr)
	return 0
}

func setMode(log *slog.Logger, n debugfs.Node, in *gofuse.SetAttrIn) syscall.Errno {
	if m, ok := in.GetMode(); ok {
		// The tree keeps permission bits only; setuid, setgid and
		// sticky bits mean nothing for these files and are dropped.
		if err := n.SetMode(fs.FileMode(m) & fs.ModePerm); err != nil {
			return toErrno(log, "chmod", err)
		}
	}
	return 0
}

// The namespace is the tree's: users cannot create, link, rename or
// remove entries. The errnos are those Linux's VFS returns for a debugfs
// directory, which has no such inode operations.

// Create implements gofs.NodeCreater: EACCES, as vfs_create on debugfs
// (`echo 1 > /sys/kernel/debug/nonexistent` is "Permission denied").
func (d *dirNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *gofuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EACCES
}

// Mkdir implements gofs.NodeMkdirer: the directory's DirOps.Mkdir
// (tracefs's instances/), else EPERM, as vfs_mkdir on debugfs.
func (d *dirNode) Mkdir(ctx context.Context, name string, mode uint32, out *gofuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	d.mount.serving.begin(d.dir, name)
	err := d.dir.UserMkdir(name)
	d.mount.serving.end(d.dir, name)
	if err != nil {
		return nil, toErrno(d.log, "mkdir", err)
	}
	return d.Lookup(ctx, name, out)
}

// Mknod implements gofs.NodeMknoder: EPERM, as vfs_mknod on debugfs.
func (d *dirNode) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *gofuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EPERM
}

// Symlink implements gofs.NodeSymlinker: EPERM, as vfs_symlink on debugfs.
func (d *dirNode) Symlink(ctx context.Context, target, name string, out *gofuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EPERM
}

// Link implements gofs.NodeLinker: EPERM, as vfs_link on debugfs.
func (d *dirNode) Link(ctx context.Context, target gofs.InodeEmbedder, name string, out *gofuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EPERM
}

// Unlink implements gofs.NodeUnlinker: EPERM, as vfs_unlink on debugfs.
func (d *dirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	return syscall.EPERM
}

// Rmdir implements gofs.NodeRmdirer: the directory's DirOps.Rmdir
// (tracefs's instances/), else EPERM, as vfs_rmdir on debugfs.
func (d *dirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	d.mount.serving.begin(d.dir, name)
	err := d.dir.UserRmdir(name)
	d.mount.serving.end(d.dir, name)
	return toErrno(d.log, "rmdir", err)
}

// Rename implements gofs.NodeRenamer: EPERM, as vfs_rename on debugfs.
func (d *dirNode) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return syscall.EPERM
}

// fileNode serves a debugfs.File.
type fileNode struct {
	gofs.Inode
	file    *debugfs.File
	log     *slog.Logger
	stop    context.Context // see dirNode
	mount   *mountState     // see dirNode
	openers openers         // see splice.go
}

var (
	_ = (gofs.NodeOpener)((*fileNode)(nil))
	_ = (gofs.NodeGetattrer)((*fileNode)(nil))
	_ = (gofs.NodeSetattrer)((*fileNode)(nil))
)

// Open implements gofs.NodeOpener. Every open is FOPEN_DIRECT_IO: files
// report size 0 and their content changes between opens, so the page
// cache must never serve (or truncate to size 0) a read. Stream files are
// also nonseekable, as trace_pipe is.
//
// The mount negotiates FUSE_ATOMIC_O_TRUNC, so an open(2) with O_TRUNC
// arrives here with O_TRUNC in flags and the kernel sends no SETATTR for
// it: FileOps.Truncate runs exactly once per `>` redirection, here, and its
// error is the error of open(2). Were the capability refused, the kernel
// would strip O_TRUNC and send SETATTR(size=0) instead, which Setattr
// handles: still exactly once.
func (n *fileNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if c, ok := gofuse.FromContext(ctx); ok {
		ctx = debugfs.WithCaller(ctx, debugfs.Caller{Pid: int(c.Pid)}) // a perf counter's open is its thread's
	}
	h, err := n.file.Open(ctx, int(flags))
	if err != nil {
		return nil, 0, toErrno(n.log, "open", err)
	}
	fuseFlags := uint32(gofuse.FOPEN_DIRECT_IO)
	if h.Stream() {
		fuseFlags |= gofuse.FOPEN_NONSEEKABLE
	}
	fh := &fileHandle{h: h, log: n.log, node: n}
	if h.Readable() {
		if c, ok := gofuse.FromContext(ctx); ok {
			fh.pid = tgidOf(c.Pid)
			n.openers.add(fh.pid, fh)
		}
		n.announceSize(ctx, fh)
	}
	return fh, fuseFlags, 0
}

// Getattr implements gofs.NodeGetattrer.
func (n *fileNode) Getattr(ctx context.Context, f gofs.FileHandle, out *gofuse.AttrOut) syscall.Errno {
	fillAttr(n.file, &out.Attr)
	out.Attr.Size = n.attrSize(ctx)
	return 0
}

// Setattr implements gofs.NodeSetattrer. A size change is truncate(2) or
// ftruncate(2) (or, without FUSE_ATOMIC_O_TRUNC, the truncation of an
// open with O_TRUNC): size 0 calls FileOps.Truncate. chmod changes the
// tree's mode; owner and time changes are accepted and ignored.
func (n *fileNode) Setattr(ctx context.Context, f gofs.FileHandle, in *gofuse.SetAttrIn, out *gofuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		var err error
		if fh, ok := f.(*fileHandle); ok {
			err = fh.h.Truncate(ctx, int64(size))
		} else {
			err = n.file.Truncate(ctx, int64(size))
		}
		if err != nil {
			return toErrno(n.log, "truncate", err)
		}
	}
	if errno := setMode(n.log, n.file, in); errno != 0 {
		return errno
	}
	fillAttr(n.file, &out.Attr)
	out.Attr.Size = n.attrSize(ctx)
	return 0
}

// fileHandle is one open of a file: the debugfs handle that holds its
// content snapshot.
type fileHandle struct {
	h    *debugfs.Handle
	log  *slog.Logger
	node *fileNode
	pid  uint32 // the opener, if the open is for reading
}

var (
	_ = (gofs.FileReader)((*fileHandle)(nil))
	_ = (gofs.FileWriter)((*fileHandle)(nil))
	_ = (gofs.FileReleaser)((*fileHandle)(nil))
	_ = (gofs.FileFlusher)((*fileHandle)(nil))
	_ = (gofs.FileIoctler)((*fileHandle)(nil))
)

// Read implements gofs.FileReader. A read of a stream that blocks
// (trace_pipe) ends at EOF when the server starts to unmount, so that
// `cat trace_pipe` in another terminal exits when kpemu does.
func (fh *fileHandle) Read(ctx context.Context, dest []byte, off int64) (gofuse.ReadResult, syscall.Errno) {
	ctx = fh.node.mount.reads.withFlags(ctx)
	stop := fh.node.stop
	if fh.h.Stream() {
		if stop.Err() != nil {
			return gofuse.ReadResultData(nil), 0
		}
		var done func()
		ctx, done = untilStop(ctx, stop)
		defer done()
	}
	n, err := fh.h.Read(ctx, dest, off)
	if err != nil {
		if stop.Err() != nil {
			return gofuse.ReadResultData(nil), 0
		}
		return nil, toErrno(fh.log, "read", err)
	}
	return gofuse.ReadResultData(dest[:n]), 0
}

// Ioctl implements gofs.FileIoctler: the seal's splice commands
// (internal/splicectl), else the file's own (trace_pipe_raw's wake),
// ENOTTY for a file without. A splice's wait, like a stream's read, ends
// when the server starts to unmount: the splice then returns 0.
func (fh *fileHandle) Ioctl(ctx context.Context, cmd uint32, arg uint64, input []byte, output []byte) (int32, syscall.Errno) {
	switch cmd {
	case splicectl.ReadCmd:
		const head = 8 // ReadArg's Want and padding
		if len(input) < head || len(output) < head+splicectl.Chunk {
			return 0, syscall.EINVAL
		}
		want := binary.LittleEndian.Uint32(input)
		n, err := fh.h.SpliceRead(ctx, output[head:head+splicectl.Chunk], int(want))
		if err != nil {
			return 0, toErrno(fh.log, "splice", err)
		}
		return int32(n), 0
	case splicectl.WaitCmd:
		stop := fh.node.stop
		if stop.Err() != nil {
			return 0, 0
		}
		ctx, done := untilStop(ctx, stop)
		defer done()
		again, err := fh.h.SpliceWait(ctx)
		switch {
		case stop.Err() != nil:
			return 0, 0
		case err != nil:
			return 0, toErrno(fh.log, "splice", err)
		case again:
			return 1, 0
		}
		return 0, 0
	case splicectl.PollCmd:
		ok, err := fh.h.PollIn()
		switch {
		case err != nil:
			return 0, toErrno(fh.log, "poll", err)
		case ok:
			return 1, 0
		}
		return 0, 0
	}
	if c, ok := gofuse.FromContext(ctx); ok {
		ctx = debugfs.WithCaller(ctx, debugfs.Caller{Pid: int(c.Pid)}) // a perf filter is read from its caller's memory
	}
	r, err := fh.h.Ioctl(ctx, cmd, arg, output)
	if err != nil {
		return 0, toErrno(fh.log, "ioctl", err)
	}
	return r, 0
}

// untilStop is ctx, cancelled too when stop is (the server starts to
// unmount), for a wait in a stream: a read of trace_pipe, a splice's
// wait. Call done when the operation ends.
func untilStop(ctx, stop context.Context) (_ context.Context, done func()) {
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(stop, cancel)
	return ctx, func() {
		unhook()
		cancel()
	}
}

// Write implements gofs.FileWriter. With FOPEN_DIRECT_IO the kernel sends
// one WRITE per write(2) (split only above the mount's max_write), so
// FileOps.Write sees each write(2)'s bytes exactly once.
func (fh *fileHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if c, ok := gofuse.FromContext(ctx); ok {
		ctx = debugfs.WithCaller(ctx, debugfs.Caller{Pid: int(c.Pid)}) // trace_marker records its writer
	}
	n, err := fh.h.Write(ctx, data, off)
	if err != nil {
		return 0, toErrno(fh.log, "write", err)
	}
	return uint32(n), 0
}

// Flush implements gofs.FileFlusher: close(2) waits for it, so what a
// file applies at close (set_ftrace_filter's hash) is in place when the
// writer's close returns, as on Linux, where the release runs at the last
// close; FUSE's RELEASE comes asynchronously after it.
func (fh *fileHandle) Flush(ctx context.Context) syscall.Errno {
	// The opener's close ends what stat(2) shows it (see splice.go); the
	// RELEASE comes later, asynchronously.
	if c, ok := gofuse.FromContext(ctx); ok && fh.h.Readable() && tgidOf(c.Pid) == fh.pid {
		fh.node.openers.remove(fh.pid, fh)
	}
	fh.h.Flush(ctx)
	return 0
}

// Release implements gofs.FileReleaser.
func (fh *fileHandle) Release(ctx context.Context) syscall.Errno {
	if fh.h.Readable() {
		fh.node.openers.remove(fh.pid, fh)
	}
	fh.h.Release()
	return 0
}

// toErrno returns the errno that err carries, for the kernel to give the
// caller. An error without one is a bug in a file's ops: it is logged and
// becomes EIO. A cancelled request (the caller was interrupted) is EINTR.
func toErrno(log *slog.Logger, op string, err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		return errno
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return syscall.EINTR
	}
	log.Warn("debugfs op returned an error without errno; returning EIO", "op", op, "err", err)
	return syscall.EIO
}
