package debugfs

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Tree is a concurrency-safe tree of [Dir] and [File] nodes rooted at an
// empty directory. The zero value is not usable; create one with [NewTree].
type Tree struct {
	// mu guards the structure of the tree: the children map of every Dir
	// in it. Node names and parents never change after creation and need
	// no lock; a node's removed flag and mode are atomics.
	//
	// Lock order: mu is a leaf lock. It is never held while calling a
	// FileOps callback or any code outside this package.
	mu sync.RWMutex

	root *Dir

	// lastIno is the inode number handed out last; numbers are never
	// reused, so an inode number names one node for the tree's lifetime
	// (the fuse adapter relies on it to tell a re-created directory from
	// the removed one of the same name).
	lastIno atomic.Uint64

	// relMu guards released, which is closed (and replaced) when a
	// handle is released: WaitIdle waits on it.
	relMu    sync.Mutex
	released chan struct{}

	// watchMu guards watchers and lastWatch.
	watchMu   sync.Mutex
	watchers  map[int]func(parent *Dir, name string)
	lastWatch int
}

// NewTree returns a tree holding only an empty root directory of mode 0700
// and inode number 1.
func NewTree() *Tree {
	t := &Tree{}
	t.root = &Dir{children: make(map[string]Node)}
	// 0700: the root of a debugfs mount, /sys/kernel/debug, is root's alone.
	t.initNode(&t.root.node, nil, "", fs.ModeDir|0o700)
	return t
}

// Root returns the root directory.
func (t *Tree) Root() *Dir { return t.root }

// Node is a [Dir] or a [File].
type Node interface {
	// Name returns the node's name in its parent; "" for the root.
	Name() string
	// Path returns the node's slash-separated path from the root,
	// without a leading slash; "" for the root.
	Path() string
	// Parent returns the directory that holds the node, nil for the root.
	// A removed node keeps its parent.
	Parent() *Dir
	// Mode returns the node's type (fs.ModeDir or none) and permission bits.
	Mode() fs.FileMode
	// SetMode replaces the permission bits (chmod). It returns EINVAL for
	// bits outside fs.ModePerm.
	SetMode(perm fs.FileMode) error
	// Ino returns the node's inode number, unique for the tree's lifetime.
	Ino() uint64
	// ModTime returns the node's creation time; like debugfs, writes and
	// reads never change it.
	ModTime() time.Time
	// Removed reports whether the node has been removed from the tree.
	Removed() bool

	base() *node
}

// node is the state common to Dir and File.
type node struct {
	tree    *Tree
	parent  *Dir // immutable
	name    string
	ino     uint64
	modTime time.Time
	mode    atomic.Uint32 // fs.FileMode: type bits | permission bits
	removed atomic.Bool
}

func (t *Tree) initNode(n *node, parent *Dir, name string, mode fs.FileMode) {
	n.tree = t
	n.parent = parent
	n.name = name
	n.ino = t.lastIno.Add(1)
	n.modTime = time.Now()
	n.mode.Store(uint32(mode))
}

func (n *node) base() *node { return n }

// Name implements [Node].
func (n *node) Name() string { return n.name }

// Parent implements [Node].
func (n *node) Parent() *Dir { return n.parent }

// Mode implements [Node].
func (n *node) Mode() fs.FileMode { return fs.FileMode(n.mode.Load()) }

// Ino implements [Node].
func (n *node) Ino() uint64 { return n.ino }

// ModTime implements [Node].
func (n *node) ModTime() time.Time { return n.modTime }

// Removed implements [Node].
func (n *node) Removed() bool { return n.removed.Load() }

// Path implements [Node].
func (n *node) Path() string {
	if n.parent == nil {
		return ""
	}
	var parts []string
	for p := n; p.parent != nil; p = &p.parent.node {
		parts = append(parts, p.name)
	}
	slices.Reverse(parts)
	return strings.Join(parts, "/")
}

// SetMode implements [Node].
func (n *node) SetMode(perm fs.FileMode) error {
	if perm&^fs.ModePerm != 0 {
		return &fs.PathError{Op: "chmod", Path: n.Path(), Err: syscall.EINVAL}
	}
	for {
		old := n.mode.Load()
		mode := fs.FileMode(old)&fs.ModeType | perm
		if n.mode.CompareAndSwap(old, uint32(mode)) {
			return nil
		}
	}
}

// Dir is a directory: a set of uniquely named child nodes.
type Dir struct {
	node

	// children is guarded by node.tree.mu. It is emptied when the
	// directory is removed.
	children map[string]Node

	// ops are what mkdir(2) and rmdir(2) of a child do; nil: both are
	// EPERM, as on debugfs. Set once, before the directory is served.
	ops atomic.Pointer[DirOps]
}

// DirOps are the operations of a directory whose children users make
// and remove, as tracefs's instances/ (its inode's mkdir and rmdir).
// They are called without any tree lock held.
type DirOps struct {
	// Mkdir makes the child name (a valid directory entry name) and
	// everything in it; its error is mkdir(2)'s.
	Mkdir func(name string) error
	// Rmdir removes the child name; its error is rmdir(2)'s.
	Rmdir func(name string) error
}

// SetOps makes d's children made and removed by ops.
func (d *Dir) SetOps(ops DirOps) { d.ops.Store(&ops) }

// UserMkdir is mkdir(2) of name in d: DirOps.Mkdir, or EPERM when d has
// none. A name that cannot be a directory entry is EINVAL.
func (d *Dir) UserMkdir(name string) error {
	ops := d.ops.Load()
	if ops == nil || ops.Mkdir == nil {
		return syscall.EPERM
	}
	if err := checkName(name); err != nil {
		return err
	}
	return ops.Mkdir(name)
}

// UserRmdir is rmdir(2) of name in d: DirOps.Rmdir, or EPERM when d has
// none.
func (d *Dir) UserRmdir(name string) error {
	ops := d.ops.Load()
	if ops == nil || ops.Rmdir == nil {
		return syscall.EPERM
	}
	return ops.Rmdir(name)
}

// releasedChan returns a channel that is closed when a handle of the
// tree is next released.
func (t *Tree) releasedChan() <-chan struct{} {
	t.relMu.Lock()
	defer t.relMu.Unlock()
	if t.released == nil {
		t.released = make(chan struct{})
	}
	return t.released
}

// notifyReleased wakes the WaitIdle calls: a handle was released.
func (t *Tree) notifyReleased() {
	t.relMu.Lock()
	defer t.relMu.Unlock()
	if t.released != nil {
		close(t.released)
		t.released = nil
	}
}

// WaitIdle waits until no file in d or below it is open, for at most
// timeout, and reports whether none is. It is for a removal that a
// close(2) just before it must not find busy: FUSE tells the server of
// the last close of a file (RELEASE) after close(2) has returned.
func (d *Dir) WaitIdle(timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		ch := d.tree.releasedChan()
		if !d.Busy() {
			return true
		}
		select {
		case <-ch:
		case <-timer.C:
			return !d.Busy()
		}
	}
}

// Busy reports whether a file in d or below it is open (a [Handle] not
// yet released).
func (d *Dir) Busy() bool {
	busy := false
	_ = walk(d, func(_ string, n Node) error {
		if f, ok := n.(*File); ok && f.opens.Load() > 0 {
			busy = true
			return fs.SkipAll
		}
		return nil
	})
	return busy
}

var _ Node = (*Dir)(nil)

// Lookup returns the child called name, or an error wrapping ENOENT.
func (d *Dir) Lookup(name string) (Node, error) {
	d.tree.mu.RLock()
	c, ok := d.children[name]
	d.tree.mu.RUnlock()
	if !ok {
		return nil, &fs.PathError{Op: "lookup", Path: path.Join(d.Path(), name), Err: syscall.ENOENT}
	}
	return c, nil
}

// Children returns the directory's children sorted by name: a snapshot,
// which later additions and removals do not change.
func (d *Dir) Children() []Node {
	d.tree.mu.RLock()
	out := make([]Node, 0, len(d.children))
	for _, c := range d.children {
		out = append(out, c)
	}
	d.tree.mu.RUnlock()
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// Names returns the names of the directory's children, sorted.
func (d *Dir) Names() []string {
	cs := d.Children()
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name()
	}
	return names
}

// Mkdir creates the subdirectory name with permission bits perm. It fails
// with EEXIST if name exists, ENOENT if d was removed, and EINVAL for a bad
// name or mode.
func (d *Dir) Mkdir(name string, perm fs.FileMode) (*Dir, error) {
	c := &Dir{children: make(map[string]Node)}
	if err := d.add(&c.node, c, "mkdir", name, fs.ModeDir|perm); err != nil {
		return nil, err
	}
	return c, nil
}

// CreateFile creates the file name with permission bits perm and the given
// operations. It fails with EEXIST if name exists, ENOENT if d was removed,
// and EINVAL for a bad name or mode.
func (d *Dir) CreateFile(name string, perm fs.FileMode, ops FileOps) (*File, error) {
	f := &File{ops: ops}
	if err := d.add(&f.node, f, "create", name, perm); err != nil {
		return nil, err
	}
	return f, nil
}

// add initializes n (the base of c) and links c into d as name.
func (d *Dir) add(n *node, c Node, op, name string, mode fs.FileMode) error {
	// The path only for an error: making it walks up to the root, which
	// adds up when a write makes thousands of event directories.
	fail := func(err error) error { return &fs.PathError{Op: op, Path: path.Join(d.Path(), name), Err: err} }
	if err := checkName(name); err != nil {
		return fail(err)
	}
	if mode.Perm() != mode&^fs.ModeDir {
		return fail(syscall.EINVAL)
	}
	d.tree.initNode(n, d, name, mode)

	d.tree.mu.Lock()
	defer d.tree.mu.Unlock()
	if d.Removed() {
		return fail(syscall.ENOENT)
	}
	if _, ok := d.children[name]; ok {
		return fail(syscall.EEXIST)
	}
	d.children[name] = c
	return nil
}

// Remove removes the child name: a file, or an empty directory. It fails
// with ENOENT if there is no such child and ENOTEMPTY for a directory that
// has children. Handles open on a removed file fail their reads and writes
// with EIO.
func (d *Dir) Remove(name string) error {
	return d.remove("remove", name, false)
}

// RemoveAll removes the child name and, if it is a directory, everything
// below it. It fails with ENOENT if there is no such child.
func (d *Dir) RemoveAll(name string) error {
	return d.remove("removeall", name, true)
}

func (d *Dir) remove(op, name string, recursive bool) error {
	if err := d.detach(op, name, recursive); err != nil {
		return err
	}
	d.tree.notifyRemoved(d, name)
	return nil
}

// detach takes child name out of d and marks it removed.
func (d *Dir) detach(op, name string, recursive bool) error {
	d.tree.mu.Lock()
	defer d.tree.mu.Unlock()
	c, ok := d.children[name]
	if !ok {
		return &fs.PathError{Op: op, Path: path.Join(d.Path(), name), Err: syscall.ENOENT}
	}
	if cd, ok := c.(*Dir); ok && len(cd.children) > 0 && !recursive {
		return &fs.PathError{Op: op, Path: cd.Path(), Err: syscall.ENOTEMPTY}
	}
	delete(d.children, name)
	markRemoved(c)
	return nil
}

// OnRemove calls fn after each removal of a node from the tree, with the
// directory it was in and its name (a removed directory's children get
// no calls of their own), until the returned cancel is called. fn runs
// in the goroutine that removed the node, without the tree's lock, before
// the removal returns: the fuse adapter drops the kernel's cached entry
// there, so that a name re-created at once is looked up anew.
func (t *Tree) OnRemove(fn func(parent *Dir, name string)) (cancel func()) {
	t.watchMu.Lock()
	defer t.watchMu.Unlock()
	if t.watchers == nil {
		t.watchers = make(map[int]func(*Dir, string))
	}
	t.lastWatch++
	id := t.lastWatch
	t.watchers[id] = fn
	return func() {
		t.watchMu.Lock()
		defer t.watchMu.Unlock()
		delete(t.watchers, id)
	}
}

// notifyRemoved calls the OnRemove watchers.
//
// Precondition: t.mu is not held.
func (t *Tree) notifyRemoved(parent *Dir, name string) {
	t.watchMu.Lock()
	fns := make([]func(*Dir, string), 0, len(t.watchers))
	for _, fn := range t.watchers {
		fns = append(fns, fn)
	}
	t.watchMu.Unlock()
	for _, fn := range fns {
		fn(parent, name)
	}
}

// markRemoved flags n and everything below it as removed.
//
// Precondition: n's tree.mu is held for writing.
func markRemoved(n Node) {
	n.base().removed.Store(true)
	if d, ok := n.(*Dir); ok {
		for _, c := range d.children {
			markRemoved(c)
		}
		clear(d.children)
	}
}

// checkName reports EINVAL for names that cannot be a directory entry.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return syscall.EINVAL
	}
	return nil
}

// File is a file whose content and write behaviour come from its
// [FileOps].
type File struct {
	node
	ops   FileOps      // immutable
	opens atomic.Int32 // the handles not yet released
}

var _ Node = (*File)(nil)

// Ops returns the file's operations.
func (f *File) Ops() FileOps { return f.ops }

// splitPath cleans p (slash-separated, relative to the root, a leading
// slash allowed) into its components; the root has none.
func splitPath(p string) []string {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// Lookup returns the node at path p. "", "/" and "." name the root. It
// fails with ENOENT if a component is missing and ENOTDIR if a component
// other than the last is a file.
func (t *Tree) Lookup(p string) (Node, error) {
	var n Node = t.root
	for _, name := range splitPath(p) {
		d, ok := n.(*Dir)
		if !ok {
			return nil, &fs.PathError{Op: "lookup", Path: p, Err: syscall.ENOTDIR}
		}
		t.mu.RLock()
		c, ok := d.children[name]
		t.mu.RUnlock()
		if !ok {
			return nil, &fs.PathError{Op: "lookup", Path: p, Err: syscall.ENOENT}
		}
		n = c
	}
	return n, nil
}

// LookupDir returns the directory at path p; ENOTDIR if it is a file.
func (t *Tree) LookupDir(p string) (*Dir, error) {
	n, err := t.Lookup(p)
	if err != nil {
		return nil, err
	}
	d, ok := n.(*Dir)
	if !ok {
		return nil, &fs.PathError{Op: "lookup", Path: p, Err: syscall.ENOTDIR}
	}
	return d, nil
}

// LookupFile returns the file at path p; EISDIR if it is a directory.
func (t *Tree) LookupFile(p string) (*File, error) {
	n, err := t.Lookup(p)
	if err != nil {
		return nil, err
	}
	f, ok := n.(*File)
	if !ok {
		return nil, &fs.PathError{Op: "lookup", Path: p, Err: syscall.EISDIR}
	}
	return f, nil
}

// parentOf returns the directory that holds (or would hold) path p and the
// last component of p. The root has no parent: EINVAL.
func (t *Tree) parentOf(op, p string) (*Dir, string, error) {
	parts := splitPath(p)
	if len(parts) == 0 {
		return nil, "", &fs.PathError{Op: op, Path: p, Err: syscall.EINVAL}
	}
	d, err := t.LookupDir(strings.Join(parts[:len(parts)-1], "/"))
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", op, p, err)
	}
	return d, parts[len(parts)-1], nil
}

// Mkdir creates the directory at path p; its parent must exist.
func (t *Tree) Mkdir(p string, perm fs.FileMode) (*Dir, error) {
	d, name, err := t.parentOf("mkdir", p)
	if err != nil {
		return nil, err
	}
	return d.Mkdir(name, perm)
}

// MkdirAll creates the directory at path p and any missing parents, all
// with permission bits perm, and returns it. Existing directories are
// kept as they are; an existing file on the way fails with ENOTDIR.
func (t *Tree) MkdirAll(p string, perm fs.FileMode) (*Dir, error) {
	d := t.root
	for _, name := range splitPath(p) {
		for {
			c, err := d.Lookup(name)
			if err == nil {
				cd, ok := c.(*Dir)
				if !ok {
					return nil, &fs.PathError{Op: "mkdir", Path: c.Path(), Err: syscall.ENOTDIR}
				}
				d = cd
				break
			}
			nd, err := d.Mkdir(name, perm)
			if err == nil {
				d = nd
				break
			}
			// Lost a race with another creator: look it up again.
			if !isErrno(err, syscall.EEXIST) {
				return nil, err
			}
		}
	}
	return d, nil
}

// CreateFile creates the file at path p; its parent must exist.
func (t *Tree) CreateFile(p string, perm fs.FileMode, ops FileOps) (*File, error) {
	d, name, err := t.parentOf("create", p)
	if err != nil {
		return nil, err
	}
	return d.CreateFile(name, perm, ops)
}

// Remove removes the file or empty directory at path p (see [Dir.Remove]).
func (t *Tree) Remove(p string) error {
	d, name, err := t.parentOf("remove", p)
	if err != nil {
		return err
	}
	return d.Remove(name)
}

// RemoveAll removes the node at path p and everything below it (see
// [Dir.RemoveAll]).
func (t *Tree) RemoveAll(p string) error {
	d, name, err := t.parentOf("removeall", p)
	if err != nil {
		return err
	}
	return d.RemoveAll(name)
}

// ReadDir returns the children of the directory at path p, sorted by name.
func (t *Tree) ReadDir(p string) ([]Node, error) {
	d, err := t.LookupDir(p)
	if err != nil {
		return nil, err
	}
	return d.Children(), nil
}

// WalkFunc is called by [Tree.Walk] for each node, with the node's path
// from the root (no leading slash; "" for the root). Returning
// [fs.SkipDir] skips the node's contents (for a file it changes nothing);
// any other error stops the walk and is returned by Walk.
type WalkFunc func(p string, n Node) error

// Walk calls fn for the node at path p and, depth first in name order, for
// every node below it. Each directory's children are listed once, when the
// walk enters it; fn runs with no lock held and may change the tree.
func (t *Tree) Walk(p string, fn WalkFunc) error {
	n, err := t.Lookup(p)
	if err != nil {
		return err
	}
	err = walk(n, fn)
	if err == fs.SkipDir {
		return nil
	}
	return err
}

func walk(n Node, fn WalkFunc) error {
	if err := fn(n.Path(), n); err != nil {
		return err
	}
	d, ok := n.(*Dir)
	if !ok {
		return nil
	}
	for _, c := range d.Children() {
		if err := walk(c, fn); err != nil && err != fs.SkipDir {
			return err
		}
	}
	return nil
}
