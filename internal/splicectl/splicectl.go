// Package splicectl is the private ioctl protocol by which the seal
// (package shadow) serves splice(2) from kpemu's stream files
// (trace_pipe_raw) to processes under scripts/kpemu-ns.sh.
//
// Linux splices trace_pipe_raw into a pipe, and trace-cmd record does
// nothing else with it. The kernel splices a FUSE file through its page
// cache, which a consuming stream cannot go through (fuse/splice.go), so
// the seal stops each splice(2) of a sealed process; when the source is
// a file of kpemu's trees, the seal takes a duplicate of the caller's
// descriptor (pidfd_getfd: the same open, the same reader), reads with
// ReadCmd what the file's splice would take, writes it into the
// caller's pipe and makes the result the splice's. The seal never
// waits: when the splice would, the caller's syscall becomes WaitCmd on
// its own descriptor, which waits as the file's splice waits
// (interruptibly: a signal ends it with EINTR, as it ends Linux's), and
// the splice runs again when it returns 1.
//
// A file that answers ReadCmd with ENOTTY is not a stream: its splice
// goes to the kernel, whose page cache serves it.
//
// FUSE cannot poll a file either (the kernel finds every file of a
// server without poll ready), so a select(2) or poll(2) of
// trace_pipe_raw would return at once where Linux's waits for
// buffer_percent; the seal stops a sealed process's select or poll and
// asks PollCmd of each of kpemu's files in it: a file that is not
// readable yet is left out, the wait is cut short, and the file is asked
// again when it ends.
package splicectl

import "unsafe"

// ioctl(2) command encoding (asm-generic/ioctl.h, as x86 and arm64 have
// it).
const (
	iocWrite = 1
	iocRead  = 2

	iocType = 'K'
)

// Chunk is the most one ReadCmd takes: a page, which is what Linux's
// trace_pipe_raw splices at a time.
const Chunk = 4096

// ReadArg is ReadCmd's argument: Want, the bytes the splice has left to
// take, in; Data out, the command's result being how many of its bytes
// are the splice's.
type ReadArg struct {
	Want uint32
	_    uint32
	Data [Chunk]byte
}

const (
	// ReadCmd takes, without waiting, what a splice(2) of Want bytes
	// from the file takes next, at most Chunk bytes; EAGAIN when the
	// splice would wait, 0 when it would return 0, and the errno a
	// splice of Want bytes fails with.
	ReadCmd uint32 = (iocRead|iocWrite)<<30 | uint32(unsafe.Sizeof(ReadArg{}))<<16 | iocType<<8 | 0xa0
	// WaitCmd waits as a splice(2) from the file that found nothing to
	// take waits. Its result is 1 when the splice tries again, 0 when
	// it returns 0 (Linux's, woken with tracing off or by the file's
	// wake ioctl).
	WaitCmd uint32 = iocType<<8 | 0xa1
	// PollCmd answers, without waiting, 1 if poll(2) finds the file
	// readable as Linux's would (trace_pipe_raw: its CPU's buffer at
	// buffer_percent), else 0; ENOTTY for a file whose poll is FUSE's
	// (always readable).
	PollCmd uint32 = iocType<<8 | 0xa2
)
