package debugfs

import "context"

// Caller is the process a file operation is done for, as far as the
// layer that serves the tree knows it: the FUSE request's pid (the
// calling thread's, in the mount's pid namespace). Most files ignore it;
// trace_marker records its writer, as Linux records the writing task.
type Caller struct {
	Pid int
}

// callerKey is the context key of a Caller.
type callerKey struct{}

// WithCaller returns ctx carrying c, for the file operations it is
// passed to.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the Caller ctx carries; false for an operation made
// in-process (Tree.ReadFile, Tree.WriteFile), which has none.
func CallerOf(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

type readFlagsKey struct{}

// WithReadFlags returns ctx carrying the open file's status flags at the
// time of a read (the f_flags Linux's read methods look at), which
// fcntl(F_SETFL) may have changed since the open: O_NONBLOCK set on a
// descriptor of trace_pipe_raw after it was opened (libtracefs does so
// to drain the buffer at the end of a recording).
func WithReadFlags(ctx context.Context, flags int) context.Context {
	return context.WithValue(ctx, readFlagsKey{}, flags)
}

// ReadFlags returns the flags WithReadFlags put in ctx; false when the
// read carries none (an in-process read: the open's flags stand).
func ReadFlags(ctx context.Context) (int, bool) {
	f, ok := ctx.Value(readFlagsKey{}).(int)
	return f, ok
}
