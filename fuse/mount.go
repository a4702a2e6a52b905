// Package fuse serves a [debugfs.Tree] at a mount point through FUSE
// (go-fuse v2), so that shell tools `cat`, `echo` and `ls` it as they would
// Linux's /sys/kernel/debug.
//
// It knows only debugfs. Every file opens with FOPEN_DIRECT_IO and reports
// size 0, like debugfs and tracefs files, while sendfile(2) and splice(2)
// still get the bytes read(2) gets (splice.go); each write(2) reaches
// debugfs.FileOps.Write once with exactly its bytes; errnos from the ops
// reach the shell unchanged; the kernel checks file modes as Linux's VFS
// does; and it caches no entries or attributes, so directories that the
// tree adds or removes show at once. Unmount takes the mount down whoever
// holds it (unmount.go), and one mount point has one server.
package fuse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	gofuse "github.com/hanwen/go-fuse/v2/fuse"

	"github.com/kpemu/kpemu/debugfs"
)

// maxWrite is the largest WRITE request the kernel sends. A write(2)
// larger than this reaches FileOps.Write in several calls; 1 MiB (the
// kernel's limit) is far above what tracing files take (Linux's tracefs
// parses writes in 4 KiB pieces anyway).
const maxWrite = gofuse.MAX_KERNEL_WRITE

// Options configure [Mount].
type Options struct {
	// Logger receives the adapter's diagnostics and, with Debug, go-fuse's
	// request trace at debug level. nil discards them.
	Logger *slog.Logger
	// Debug logs every FUSE request and reply to Logger, at debug level.
	Debug bool
	// FsName is the source shown by mount(8), df and /proc/mounts;
	// "debugfs" if empty. The type shown is "fuse.kpemu": tools that
	// look for a tracefs or debugfs by type (trace-cmd, perf) find it
	// only under kpemu-ns.sh's seal (shadow.Seal), which shows it so.
	FsName string
	// Root is the directory of the tree that the mount shows (as
	// /sys/kernel/tracing shows debugfs's tracing/); the whole tree if
	// empty.
	Root string
	// AllowOther lets users other than the mounter access the mount.
	AllowOther bool
}

// Server is a mounted tree. Unmount it when done.
type Server struct {
	dir string
	log *slog.Logger
	srv *gofuse.Server

	// done is closed when go-fuse's serve loop has returned: the kernel
	// connection is gone and every serving goroutine has exited.
	done chan struct{}

	conn uint32     // the FUSE connection's number (fusectl)
	lock *ownerLock // this process serves dir
	stop func()     // ends blocked stream reads (see fileHandle.Read)
	// unwatch stops invalidating the kernel's entries of removed nodes.
	unwatch func()

	// mu serializes Unmount.
	mu sync.Mutex
	// stopCtx detaches the unmount-on-cancel callback of Mount's context;
	// guarded by mu.
	stopCtx func() bool
}

// Mount mounts tree at dir and serves it until [Server.Unmount], or until
// ctx is done, which unmounts too. dir is created if missing; if dir is a
// dead FUSE mount (its server died without unmounting, so stat fails with
// ENOTCONN), it is lazily unmounted first.
//
// As root the mount is made with mount(2) directly; otherwise, or if that
// fails, through the fusermount3 helper.
func Mount(ctx context.Context, dir string, tree *debugfs.Tree, opts Options) (*Server, error) {
	if tree == nil {
		return nil, fmt.Errorf("fuse mount %s: nil tree: %w", dir, syscall.EINVAL)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("fuse mount %s: %w", dir, err)
	}
	log = log.With("mountpoint", abs)
	lock, err := lockMountPoint(abs)
	if err != nil {
		return nil, fmt.Errorf("fuse mount %s: %w", abs, err)
	}
	mounted := false
	defer func() {
		if !mounted {
			lock.release()
		}
	}()
	if err := cleanStaleMount(ctx, abs, log); err != nil {
		return nil, fmt.Errorf("fuse mount %s: %w", abs, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("fuse mount: %w", err)
	}

	fsName := opts.FsName
	if fsName == "" {
		fsName = "debugfs"
	}
	rootDir := tree.Root()
	if opts.Root != "" {
		if rootDir, err = tree.LookupDir(opts.Root); err != nil {
			return nil, fmt.Errorf("fuse mount %s: root %s: %w", abs, opts.Root, err)
		}
	}
	// The kernel keeps entries (a removal drops them at once, see
	// invalidate) and directories' attributes (see dirAttrTimeout), and
	// asks for every file's attributes (the size it reports depends on
	// the caller, see splice.go) and every name it does not know: the
	// tree adds event directories at any time.
	var zero time.Duration
	entryTimeout := time.Duration(entryTimeout)
	fsOpts := &gofs.Options{
		MountOptions: gofuse.MountOptions{
			FsName:     fsName,
			Name:       "kpemu",
			AllowOther: opts.AllowOther,
			Debug:      opts.Debug,
			Logger:     slog.NewLogLogger(log.Handler(), slog.LevelDebug),
			// DirectMount falls back to fusermount by itself when
			// mount(2) fails (not root, no CAP_SYS_ADMIN).
			DirectMount: true,
			MaxWrite:    maxWrite,
			// debugfs has no extended attributes; without this every
			// write would first cost a getxattr(security.capability).
			DisableXAttrs: true,
			// O_TRUNC arrives in OPEN: truncation belongs to the open,
			// as in Linux's probes_open (see fileNode.Open).
			ExtraCapabilities: gofuse.CAP_ATOMIC_O_TRUNC,
			// The kernel checks the mode bits at open and lookup, as
			// Linux's VFS does for debugfs: without this a process
			// without CAP_DAC_OVERRIDE could open a 0400 file for
			// writing, and the server would have to refuse each op.
			Options: []string{"default_permissions"},
		},
		EntryTimeout:    &entryTimeout,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		RootStableAttr:  &gofs.StableAttr{Ino: rootDir.Ino()},
		// A file chmod'ed to 000 is mode 000; go-fuse would show 0644.
		NullPermissions: true,
		Logger:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	stopCtx, stop := context.WithCancel(context.Background())
	ms := &mountState{}
	root := &dirNode{dir: rootDir, log: log, stop: stopCtx, mount: ms}
	rootPath := rootDir.Path()
	srv, err := gofuse.NewServer(newSplicingFS(gofs.NewNodeFS(root, fsOpts), &ms.reads), abs, &fsOpts.MountOptions)
	if err != nil {
		stop()
		return nil, fmt.Errorf("fuse mount %s: %w", abs, err)
	}
	s := &Server{dir: abs, log: log, srv: srv, done: make(chan struct{}), lock: lock, stop: stop}
	go func() {
		defer close(s.done)
		srv.Serve()
	}()
	if err := waitMount(srv); err != nil {
		// The kernel is mounted but the connection did not come up:
		// take the mount down so that the serve loop exits.
		if uerr := srv.Unmount(); uerr != nil {
			log.Warn("unmount after failed mount", "err", uerr)
		} else {
			<-s.done
		}
		return nil, fmt.Errorf("fuse mount %s: %w", abs, err)
	}
	if s.conn, err = connID(abs); err != nil {
		log.Warn("no FUSE connection number; unmount cannot abort the connection", "err", err)
	}
	s.unwatch = tree.OnRemove(func(parent *debugfs.Dir, name string) {
		if ms.serving.has(parent, name) {
			return // an rmdir's own removal (see dirOpSet)
		}
		invalidate(root.EmbeddedInode(), rootPath, parent, name)
	})
	mounted = true
	s.mu.Lock()
	s.stopCtx = context.AfterFunc(ctx, func() {
		if err := s.Unmount(); err != nil {
			log.Warn("unmount on context done", "err", err)
		}
	})
	s.mu.Unlock()
	log.Debug("mounted", "fsname", fsName)
	return s, nil
}

// Dir returns the absolute mount point.
func (s *Server) Dir() string { return s.dir }

// Unmount unmounts the tree and waits until the serving goroutines have
// exited. Blocked reads of streams (trace_pipe) end at EOF. A mount that
// a process still uses (a file open, its working directory in it) is
// detached lazily, copies of it in other mount namespaces are detached
// too, and the connection is aborted, so that whoever still holds it gets
// ENOTCONN and Unmount does not wait for them. Unmounting an unmounted
// server does nothing.
func (s *Server) Unmount() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopCtx != nil {
		s.stopCtx()
		s.stopCtx = nil
	}
	s.stop()
	if s.unwatch != nil {
		s.unwatch()
	}
	defer func() {
		s.lock.release()
		s.lock = nil
	}()
	select {
	case <-s.done:
		// Unmounted from outside (umount, fusermount -u) or before.
		return nil
	default:
	}
	if err := s.teardown(); err != nil {
		return fmt.Errorf("fuse unmount %s: %w", s.dir, err)
	}
	s.log.Debug("unmounted")
	return nil
}

// Wait blocks until the tree is unmounted, by [Server.Unmount] or from
// outside (umount(8), fusermount3 -u), and the server has stopped.
func (s *Server) Wait() { <-s.done }

// cleanStaleMount lazily unmounts dir if it is a FUSE mount whose server
// is gone: statfs(2) on it fails with ENOTCONN ("Transport endpoint is
// not connected"; stat(2) may still answer from the kernel's cache), and
// mounting over it would fail the same way.
func cleanStaleMount(ctx context.Context, dir string, log *slog.Logger) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); !errors.Is(err, syscall.ENOTCONN) {
		return nil
	}
	log.Info("lazily unmounting stale FUSE mount")
	uerr := syscall.Unmount(dir, syscall.MNT_DETACH)
	if uerr != nil {
		// Not root: the setuid helper may unmount a mount of ours.
		out, ferr := exec.CommandContext(ctx, "fusermount3", "-u", "-z", dir).CombinedOutput()
		if ferr != nil {
			return fmt.Errorf("stale mount: umount: %w; fusermount3 -u -z: %w (%s)", uerr, ferr, out)
		}
	}
	if err := syscall.Statfs(dir, &st); errors.Is(err, syscall.ENOTCONN) {
		return fmt.Errorf("stale mount still present after lazy unmount: %w", err)
	}
	return nil
}
