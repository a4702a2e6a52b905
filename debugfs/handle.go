package debugfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// FileOps are the operations of a [File]. Any of them may be nil. They are
// called without any tree lock held and may run concurrently for different
// opens; a file that needs mutual exclusion provides it.
type FileOps struct {
	// Show generates the whole content into w. It is called at most once
	// per open, on the first read, and the reads of that open are served
	// from what it wrote (seq_file regenerates per open). nil: reads fail
	// with EINVAL, as Linux's read(2) does on a file without a read
	// operation. An error fails the read(2) and is not cached: the next
	// read calls Show again.
	Show func(ctx context.Context, w *bytes.Buffer) error

	// Read, if not nil, serves reads directly instead of Show: it fills p
	// from offset off and returns the count, 0 at end of file. It is for
	// files that are streams rather than snapshots (a consuming reader
	// such as trace_pipe); it may block until data arrives and must then
	// return when ctx is done (the FUSE request was interrupted).
	Read func(ctx context.Context, p []byte, off int64) (int, error)

	// OpenRead, if not nil, is called by every open for reading of a
	// stream file, with the open(2) flags, and the function it returns
	// serves that open's reads in place of Read. It is for streams that
	// keep state per open: trace_pipe keeps the rest of a line that a
	// short read did not take, for that open's next read, as Linux's
	// per-open trace_iterator does. Its error is the error of open(2).
	// The Reader may also be a [Splicer], an [Ioctler] and a [Releaser].
	OpenRead func(ctx context.Context, flags int) (Reader, error)

	// Seekable makes a file with Read a random-access file (offsets name
	// positions, as in /dev/mem) rather than a nonseekable stream.
	Seekable bool

	// Write is called once per write(2) with exactly the bytes written and
	// the file offset. It returns how many bytes it consumed (a short count
	// makes the writer write the rest again, as with Linux), or an error.
	// nil: writes fail with EINVAL (Linux: a write to kprobes/list).
	Write func(ctx context.Context, p []byte, off int64) (int, error)

	// Truncate is called when the file is opened for writing with O_TRUNC,
	// or truncated to size 0; its error fails that open(2) or truncate(2)
	// (kprobe_events clears all events and fails with EBUSY if one is in
	// use). nil: truncation is accepted and does nothing, so that
	// `echo 1 > enable` works.
	Truncate func(ctx context.Context) error

	// Open, if not nil, is called by every open for writing (after
	// Truncate), with the open(2) flags, and what it returns serves that
	// open's writes in place of Write. It is for files whose writes
	// build something per open that the close applies, as Linux's
	// set_ftrace_filter builds a hash that its release installs. Its
	// error is the error of open(2).
	Open func(ctx context.Context, flags int) (OpenFile, error)
}

// Reader serves the reads of one open of a stream (FileOps.OpenRead).
type Reader interface {
	Read(ctx context.Context, p []byte, off int64) (int, error)
}

// ReadFunc is a Reader that is a function.
type ReadFunc func(ctx context.Context, p []byte, off int64) (int, error)

// Read calls f.
func (f ReadFunc) Read(ctx context.Context, p []byte, off int64) (int, error) { return f(ctx, p, off) }

// Splicer is a Reader whose splice(2) is not its read(2): Linux's
// trace_pipe_raw splices whole pages only, and waits for buffer_percent.
// The FUSE tree serves it to the seal (package internal/splicectl).
type Splicer interface {
	// SpliceRead takes, without waiting, what a splice(2) of want bytes
	// takes next, into p (at most len(p) bytes); EAGAIN when the splice
	// would wait. want 0 takes nothing and returns 0.
	SpliceRead(ctx context.Context, p []byte, want int) (int, error)
	// SpliceWait waits as a splice that found nothing to take waits,
	// until ctx is done (EINTR); again is whether the splice looks
	// again, else it returns 0.
	SpliceWait(ctx context.Context) (again bool, err error)
}

// Poller is a Reader whose poll(2) is not always readable: Linux's
// trace_pipe_raw polls readable once its CPU's buffer reaches
// buffer_percent. FUSE cannot poll a file (go-fuse answers ENOSYS, and
// the kernel then finds every file ready), so the tree tells the seal
// (package internal/splicectl), which holds a sealed process's select
// until it is.
type Poller interface {
	// PollIn reports whether poll(2) finds the file readable now.
	PollIn() bool
}

// Releaser is a Reader that holds something until its open's last
// close(2) (a perf counter).
type Releaser interface {
	// Release is called once, when the open is released.
	Release()
}

// Ioctler is a Reader with ioctl(2) commands (trace_pipe_raw's wake).
type Ioctler interface {
	// Ioctl serves cmd with arg and returns ioctl's result; ENOTTY for
	// a command the file does not have. out is the caller's buffer of a
	// command that reads (_IOR: its size in the number), filled in
	// place; nil for the others.
	Ioctl(ctx context.Context, cmd uint32, arg uint64, out []byte) (int32, error)
}

// OpenFile is one open of a file whose FileOps has Open.
type OpenFile interface {
	// Write is FileOps.Write for this open.
	Write(ctx context.Context, p []byte, off int64) (int, error)
	// Close applies what the writes built. It runs at every close(2)
	// of a descriptor of the open (FUSE sends FLUSH, which close(2)
	// waits for, where the RELEASE that follows is asynchronous) and
	// again at Release, so it must be idempotent. It cannot fail, as a
	// release cannot.
	Close(ctx context.Context)
}

// Handle is an open file: the result of [File.Open] or [Tree.Open]. It
// holds the per-open content snapshot. A Handle is safe for concurrent use.
type Handle struct {
	file  *File
	flags int // immutable

	// mu guards snap; it is held while Show runs so that concurrent
	// first reads of one open generate the content once.
	mu   sync.Mutex
	snap []byte // nil until the first successful Show

	released bool // guarded by mu

	open OpenFile // FileOps.Open's result for this open, or nil; immutable

	// read is FileOps.OpenRead's result for this open, or nil; immutable.
	read Reader
}

// Open opens f with the open(2) flags (os.O_RDONLY, os.O_WRONLY, os.O_RDWR,
// optionally os.O_TRUNC; others are ignored). Opening for writing with
// O_TRUNC calls FileOps.Truncate, and its error is returned. Opening a
// removed file fails with ENOENT. Release the handle when done.
func (f *File) Open(ctx context.Context, flags int) (*Handle, error) {
	p := f.Path()
	if f.Removed() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}
	}
	// Like Linux's tracefs probes_open, truncation is tied to an open for
	// writing: O_RDONLY|O_TRUNC does not clear anything.
	if flags&os.O_TRUNC != 0 && writable(flags) {
		if err := f.truncate(ctx); err != nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: err}
		}
	}
	h := &Handle{file: f, flags: flags}
	if f.ops.Open != nil && writable(flags) {
		of, err := f.ops.Open(ctx, flags)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		h.open = of
	}
	if f.ops.OpenRead != nil && readable(flags) {
		rf, err := f.ops.OpenRead(ctx, flags)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		h.read = rf
	}
	f.opens.Add(1)
	return h, nil
}

// Truncate truncates the file to size, as truncate(2) does: size 0 calls
// FileOps.Truncate; other sizes are accepted and change nothing, as
// debugfs's simple_setattr does for a file whose size is always reported
// as 0. A negative size is EINVAL.
func (f *File) Truncate(ctx context.Context, size int64) error {
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.Path(), Err: syscall.EINVAL}
	}
	if size > 0 {
		return nil
	}
	if err := f.truncate(ctx); err != nil {
		return &fs.PathError{Op: "truncate", Path: f.Path(), Err: err}
	}
	return nil
}

func (f *File) truncate(ctx context.Context) error {
	if f.ops.Truncate == nil {
		return nil
	}
	return f.ops.Truncate(ctx)
}

func writable(flags int) bool {
	acc := flags & syscall.O_ACCMODE
	return acc == os.O_WRONLY || acc == os.O_RDWR
}

func readable(flags int) bool {
	acc := flags & syscall.O_ACCMODE
	return acc == os.O_RDONLY || acc == os.O_RDWR
}

// File returns the file the handle was opened on.
func (h *Handle) File() *File { return h.file }

// Flags returns the flags the handle was opened with.
func (h *Handle) Flags() int { return h.flags }

// Stream reports whether the file is a stream (FileOps.Read or OpenRead
// is set, and it is not Seekable) rather than a per-open snapshot.
func (h *Handle) Stream() bool {
	ops := h.file.ops
	return ops.OpenRead != nil || ops.Read != nil && !ops.Seekable
}

// check reports the errno that stops an I/O op on h before the file's ops
// see it.
//
// Precondition: h.mu is not held.
func (h *Handle) check(op string, mayDo func(int) bool) error {
	h.mu.Lock()
	released := h.released
	h.mu.Unlock()
	switch {
	case released || !mayDo(h.flags):
		return &fs.PathError{Op: op, Path: h.file.Path(), Err: syscall.EBADF}
	case h.file.Removed():
		// debugfs fails I/O on a removed file's open handles with EIO.
		return &fs.PathError{Op: op, Path: h.file.Path(), Err: syscall.EIO}
	}
	return nil
}

// Read reads into p from offset off, like pread(2): it returns the number
// of bytes read, 0 at end of file. Reads are served from the content that
// FileOps.Show generated for this handle (or directly by FileOps.Read).
func (h *Handle) Read(ctx context.Context, p []byte, off int64) (int, error) {
	if err := h.check("read", readable); err != nil {
		return 0, err
	}
	ops := h.file.ops
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: h.file.Path(), Err: syscall.EINVAL}
	}
	read := ops.Read
	if h.read != nil {
		read = h.read.Read
	}
	if read != nil {
		n, err := read(ctx, p, off)
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: h.file.Path(), Err: err}
		}
		if n < 0 || n > len(p) {
			return 0, &fs.PathError{Op: "read", Path: h.file.Path(),
				Err: fmt.Errorf("read op returned %d for a %d-byte buffer: %w", n, len(p), syscall.EIO)}
		}
		return n, nil
	}
	if ops.Show == nil {
		return 0, &fs.PathError{Op: "read", Path: h.file.Path(), Err: syscall.EINVAL}
	}
	snap, err := h.snapshot(ctx)
	if err != nil {
		return 0, &fs.PathError{Op: "read", Path: h.file.Path(), Err: err}
	}
	if off >= int64(len(snap)) {
		return 0, nil
	}
	return copy(p, snap[off:]), nil
}

// SpliceRead is [Splicer.SpliceRead] of the open's reader: ENOTTY if it
// has none (the file's splice is its read, or the page cache's).
func (h *Handle) SpliceRead(ctx context.Context, p []byte, want int) (int, error) {
	s, err := h.splicer()
	if err != nil {
		return 0, err
	}
	n, err := s.SpliceRead(ctx, p, want)
	if err != nil {
		return 0, &fs.PathError{Op: "splice", Path: h.file.Path(), Err: err}
	}
	if n < 0 || n > len(p) {
		return 0, &fs.PathError{Op: "splice", Path: h.file.Path(),
			Err: fmt.Errorf("splice op returned %d for a %d-byte buffer: %w", n, len(p), syscall.EIO)}
	}
	return n, nil
}

// SpliceWait is [Splicer.SpliceWait] of the open's reader (ENOTTY if
// none).
func (h *Handle) SpliceWait(ctx context.Context) (again bool, err error) {
	s, err := h.splicer()
	if err != nil {
		return false, err
	}
	if again, err = s.SpliceWait(ctx); err != nil {
		return false, &fs.PathError{Op: "splice", Path: h.file.Path(), Err: err}
	}
	return again, nil
}

// splicer is the open's reader as a Splicer, once the handle may read.
// PollIn is [Poller.PollIn] of the open's reader (ENOTTY if none: its
// poll is FUSE's, always readable).
func (h *Handle) PollIn() (bool, error) {
	if err := h.check("poll", readable); err != nil {
		return false, err
	}
	p, ok := h.read.(Poller)
	if !ok {
		return false, &fs.PathError{Op: "poll", Path: h.file.Path(), Err: syscall.ENOTTY}
	}
	return p.PollIn(), nil
}

func (h *Handle) splicer() (Splicer, error) {
	if err := h.check("splice", readable); err != nil {
		return nil, err
	}
	s, ok := h.read.(Splicer)
	if !ok {
		return nil, &fs.PathError{Op: "splice", Path: h.file.Path(), Err: syscall.ENOTTY}
	}
	return s, nil
}

// Ioctl is ioctl(2) on the open: [Ioctler.Ioctl] of its reader, ENOTTY
// if it has none, as for a debugfs file without unlocked_ioctl.
func (h *Handle) Ioctl(ctx context.Context, cmd uint32, arg uint64, out []byte) (int32, error) {
	if err := h.check("ioctl", func(int) bool { return true }); err != nil {
		return 0, err
	}
	io, ok := h.read.(Ioctler)
	if !ok {
		return 0, &fs.PathError{Op: "ioctl", Path: h.file.Path(), Err: syscall.ENOTTY}
	}
	r, err := io.Ioctl(ctx, cmd, arg, out)
	if err != nil {
		return 0, &fs.PathError{Op: "ioctl", Path: h.file.Path(), Err: err}
	}
	return r, nil
}

// Size returns the size of the handle's content: for a file with
// FileOps.Show, the length of this open's snapshot (generating it, as a
// first read would); ok is false for streams and random-access files,
// whose content has no length.
func (h *Handle) Size(ctx context.Context) (size int64, ok bool, err error) {
	if h.file.ops.Read != nil || h.read != nil || h.file.ops.Show == nil {
		return 0, false, nil
	}
	if err := h.check("read", readable); err != nil {
		return 0, false, err
	}
	snap, err := h.snapshot(ctx)
	if err != nil {
		return 0, false, &fs.PathError{Op: "read", Path: h.file.Path(), Err: err}
	}
	return int64(len(snap)), true, nil
}

// Readable reports whether the handle was opened for reading.
func (h *Handle) Readable() bool { return readable(h.flags) }

// snapshot returns the handle's content, generating it on first use.
//
// Precondition: h.mu is not held.
func (h *Handle) snapshot(ctx context.Context) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.snap != nil {
		return h.snap, nil
	}
	var buf bytes.Buffer
	if err := h.file.ops.Show(ctx, &buf); err != nil {
		return nil, err
	}
	// A non-nil empty slice marks "generated, and empty".
	h.snap = append(make([]byte, 0, buf.Len()), buf.Bytes()...)
	return h.snap, nil
}

// Write passes p, written at offset off, to FileOps.Write and returns the
// number of bytes it consumed. An empty p returns 0 without calling it,
// as FUSE never forwards an empty write.
func (h *Handle) Write(ctx context.Context, p []byte, off int64) (int, error) {
	if err := h.check("write", writable); err != nil {
		return 0, err
	}
	write := h.file.ops.Write
	if h.open != nil {
		write = h.open.Write
	}
	if write == nil {
		return 0, &fs.PathError{Op: "write", Path: h.file.Path(), Err: syscall.EINVAL}
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := write(ctx, p, off)
	if err != nil {
		return 0, &fs.PathError{Op: "write", Path: h.file.Path(), Err: err}
	}
	if n < 0 || n > len(p) {
		return 0, &fs.PathError{Op: "write", Path: h.file.Path(),
			Err: fmt.Errorf("write op consumed %d of %d bytes: %w", n, len(p), syscall.EIO)}
	}
	return n, nil
}

// Truncate truncates the handle's file (ftruncate(2)); see [File.Truncate].
func (h *Handle) Truncate(ctx context.Context, size int64) error {
	if err := h.check("truncate", writable); err != nil {
		return err
	}
	return h.file.Truncate(ctx, size)
}

// Flush is close(2) of a descriptor of the open: a file with
// FileOps.Open applies what this open's writes built (OpenFile.Close).
func (h *Handle) Flush(ctx context.Context) {
	if h.open != nil {
		h.open.Close(ctx)
	}
}

// Release closes the handle and drops its snapshot; it flushes first, once.
// Later I/O on it fails with EBADF. Releasing twice is harmless.
func (h *Handle) Release() {
	h.mu.Lock()
	first := !h.released
	h.released = true
	h.snap = nil
	h.mu.Unlock()
	if first {
		h.Flush(context.Background())
		if r, ok := h.read.(Releaser); ok {
			r.Release()
		}
		h.file.opens.Add(-1)
		h.file.tree.notifyReleased()
	}
}

// Open opens the file at path p (see [File.Open]). A directory is EISDIR.
func (t *Tree) Open(ctx context.Context, p string, flags int) (*Handle, error) {
	n, err := t.Lookup(p)
	if err != nil {
		return nil, err
	}
	f, ok := n.(*File)
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: syscall.EISDIR}
	}
	return f.Open(ctx, flags)
}

// ReadFile opens the file at path p for reading, reads it to the end and
// releases it, as `cat` does.
func (t *Tree) ReadFile(p string) ([]byte, error) {
	ctx := context.Background()
	h, err := t.Open(ctx, p, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer h.Release()
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := h.Read(ctx, buf, int64(len(out)))
		if err != nil {
			return out, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

// WriteFile opens the file at path p for writing (with O_TRUNC if trunc:
// `echo x > f`; without: `echo x >> f`), writes data with one write and
// releases the handle. Like a writer looping on write(2), it writes the
// rest again after a short count; a write that consumes nothing is
// io.ErrShortWrite. An empty data only opens (and maybe truncates).
func (t *Tree) WriteFile(p string, data []byte, trunc bool) error {
	ctx := context.Background()
	flags := os.O_WRONLY
	if trunc {
		flags |= os.O_TRUNC
	} else {
		flags |= os.O_APPEND
	}
	h, err := t.Open(ctx, p, flags)
	if err != nil {
		return err
	}
	defer h.Release()
	// Files report size 0, so an append (like any write here) starts at
	// offset 0, as on debugfs.
	var off int64
	for len(data) > 0 {
		n, err := h.Write(ctx, data, off)
		if err != nil {
			return err
		}
		if n == 0 {
			return &fs.PathError{Op: "write", Path: p, Err: io.ErrShortWrite}
		}
		data = data[n:]
		off += int64(n)
	}
	return nil
}

// isErrno reports whether err carries errno.
func isErrno(err error, errno syscall.Errno) bool {
	var e syscall.Errno
	return errors.As(err, &e) && e == errno
}
