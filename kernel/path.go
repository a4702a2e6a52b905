package kernel

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Path lookup in the guest's file system, from the host. Linux's
// uprobe_events resolves the probed file with kern_path(); kpemu's tracing
// files live on the host, so they resolve it here, by walking the guest's
// dentry tree exactly as the guest's own path_lookup() (fs/namei.c,
// walk_locked) does, with every vCPU stopped. Struct layouts come from the
// image's DWARF; nothing about them is hard-coded.

// File types of i_mode, from Linux's include/uapi/linux/stat.h (an ABI,
// and the guest's linux/fs.h uses the same values).
const (
	sIFMT  = 0o170000
	sIFDIR = 0o040000
	sIFREG = 0o100000
	sIFLNK = 0o120000
)

// Limits of the guest's walk, from its linux/fs.h. They are macros, which
// DWARF does not record.
const (
	guestMaxSymlinks = 40  // MAXSYMLINKS: deeper is -ELOOP
	guestPathMax     = 256 // PATH_MAX: getname() refuses a path this long
)

// maxDirEntries bounds the walk of one directory's d_subdirs list, so that
// a corrupt list (the guest's memory is the guest's) cannot loop the host.
const maxDirEntries = 1 << 20

// dcacheLockWait bounds how long LookupPath waits for a guest CPU that
// holds dcache_lock (stopped inside a tree update) to drop it.
const dcacheLockWait = 2 * time.Second

// GuestFile is what a guest path resolves to.
type GuestFile struct {
	Dentry uint64 // its struct dentry, a kernel address
	Inode  uint64 // its struct inode: the file's identity while it exists
	Mode   uint32 // i_mode: the S_IFMT type and the permission bits
}

// IsRegular reports whether the file is a regular file (d_is_reg).
func (f GuestFile) IsRegular() bool { return f.Mode&sIFMT == sIFREG }

// IsDir reports whether the file is a directory (d_is_dir).
func (f GuestFile) IsDir() bool { return f.Mode&sIFMT == sIFDIR }

// guestPaths is the layout the walk needs, read from the image's DWARF
// the first time a lookup asks (a full DWARF scan costs more than a boot
// should pay for a feature most runs do not use).
type guestPaths struct {
	img  io.ReaderAt // the guest ELF, for its DWARF
	once sync.Once
	l    dentryLayout
	err  error
}

// dentryLayout is where the guest keeps what the walk reads.
type dentryLayout struct {
	rootDentry uint64 // &root_dentry, a struct dentry *
	dcacheLock uint64 // &dcache_lock's lock word
	lockSize   int64

	dParent, dInode, dChild, dSubdirs, dName int64 // struct dentry
	dNameLen                                 int64 // sizeof d_name
	iMode, iModeSize, iPrivate               int64 // struct inode
	listNext                                 int64 // struct list_head
}

// LookupPath resolves path in the guest's file system as the guest's name
// system calls do (getname_at, then path_lookup with LOOKUP_FOLLOW): an
// absolute path from the root, "." and ".." as directories hold them, a
// trailing "/" ignored, symlinks followed (in the last component too) at
// most 40 deep. A relative path fails with ENOENT, as there (the host
// caller has no guest working directory). Its errors wrap the guest's
// errnos: ENOENT (no such name, "" or relative), ENOTDIR, ENAMETOOLONG
// (PATH_MAX bytes or more, as getname()), ELOOP.
//
// It stops the machine for the walk, and waits (while the guest runs,
// briefly) for a CPU that holds dcache_lock to drop it: EAGAIN if none
// does. An image whose DWARF does not describe the dentry tree gets an
// error wrapping ErrBadImage and EOPNOTSUPP. Like StopMachine, it must
// not be called from a hostcall handler.
func (k *Kernel) LookupPath(path string) (GuestFile, error) {
	gp := &k.paths
	gp.once.Do(func() { gp.l, gp.err = readDentryLayout(gp.img, k.syms) })
	if gp.err != nil {
		return GuestFile{}, gp.err
	}
	switch {
	case path == "":
		return GuestFile{}, fmt.Errorf("%w: empty path", syscall.ENOENT)
	case len(path) >= guestPathMax:
		return GuestFile{}, fmt.Errorf("%w: %d bytes", syscall.ENAMETOOLONG, len(path))
	case path[0] != '/':
		return GuestFile{}, fmt.Errorf("%w: %s is relative", syscall.ENOENT, path)
	}
	deadline := time.Now().Add(dcacheLockWait)
	for {
		var f GuestFile
		var err error
		busy := false
		k.StopMachine(func() {
			w := &pathWalk{k: k, l: &gp.l}
			if busy, err = w.locked(); busy || err != nil {
				return
			}
			f, err = w.lookup(path)
		})
		if !busy {
			return f, err
		}
		// A CPU stopped inside the lock may be half-way through a list
		// update; let it finish, as the guest's own walkers would spin.
		if !k.running.Load() || time.Now().After(deadline) {
			return GuestFile{}, fmt.Errorf("%w: a guest CPU holds dcache_lock", syscall.EAGAIN)
		}
		time.Sleep(time.Millisecond)
	}
}

// imageDWARF is the image's DWARF, for the layouts the host reads guest
// structures with; an image without it is ErrBadImage and EOPNOTSUPP.
func imageDWARF(img io.ReaderAt) (*dwarf.Data, error) {
	f, err := elf.NewFile(img)
	if err != nil {
		return nil, fmt.Errorf("%w: %w: %w", ErrBadImage, syscall.EOPNOTSUPP, err)
	}
	d, err := f.DWARF()
	if err != nil {
		return nil, fmt.Errorf("%w: %w: reading DWARF: %w", ErrBadImage, syscall.EOPNOTSUPP, err)
	}
	return d, nil
}

// readDentryLayout finds struct dentry, struct inode, struct list_head and
// raw_spinlock_t in the image's DWARF, and root_dentry and dcache_lock in
// its symbols.
func readDentryLayout(img io.ReaderAt, syms *Kallsyms) (dentryLayout, error) {
	var l dentryLayout
	missing := func(what string) error {
		return fmt.Errorf("%w: %w: no %s in the image (needed to resolve guest paths)", ErrBadImage, syscall.EOPNOTSUPP, what)
	}
	d, err := imageDWARF(img)
	if err != nil {
		return l, err
	}
	types := findStructs(d, "dentry", "inode", "list_head", "raw_spinlock_t")
	field := func(st, path string) (int64, dwarf.Type, error) {
		s := types[st]
		if s == nil {
			return 0, nil, missing("struct " + st + " in DWARF")
		}
		off, t, ok := fieldOffset(s, strings.Split(path, ".")...)
		if !ok {
			return 0, nil, missing(st + "." + path + " in DWARF")
		}
		return off, t, nil
	}
	var t dwarf.Type
	var lockOff int64
	for _, fl := range []struct {
		st, path string
		off      *int64
		size     *int64
	}{
		{"dentry", "d_parent", &l.dParent, nil},
		{"dentry", "d_inode", &l.dInode, nil},
		{"dentry", "d_child", &l.dChild, nil},
		{"dentry", "d_subdirs", &l.dSubdirs, nil},
		{"dentry", "d_name", &l.dName, &l.dNameLen},
		{"inode", "i_mode", &l.iMode, &l.iModeSize},
		{"inode", "i_private", &l.iPrivate, nil},
		{"list_head", "next", &l.listNext, nil},
		{"raw_spinlock_t", "raw_lock.lock", &lockOff, &l.lockSize},
	} {
		if *fl.off, t, err = field(fl.st, fl.path); err != nil {
			return l, err
		}
		if fl.size != nil {
			*fl.size = t.Size()
		}
	}
	switch {
	case l.iModeSize != 2 && l.iModeSize != 4:
		return l, missing(fmt.Sprintf("usable inode.i_mode (%d bytes)", l.iModeSize))
	case l.lockSize != 4:
		return l, missing(fmt.Sprintf("usable raw_spinlock_t (a %d-byte lock word)", l.lockSize))
	case l.dNameLen <= 0:
		return l, missing("usable dentry.d_name")
	}
	for _, s := range []struct {
		name string
		addr *uint64
		off  int64
	}{{"root_dentry", &l.rootDentry, 0}, {"dcache_lock", &l.dcacheLock, lockOff}} {
		sym, ok := syms.LookupName(s.name)
		if !ok {
			return l, missing("symbol " + s.name)
		}
		*s.addr = sym.Addr + uint64(s.off)
	}
	return l, nil
}

// findStructs finds, in one pass, the complete struct types named by
// names: a struct tag ("dentry") or a typedef of a struct
// ("raw_spinlock_t").
func findStructs(d *dwarf.Data, names ...string) map[string]*dwarf.StructType {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	found := make(map[string]*dwarf.StructType, len(names))
	r := d.Reader()
	for len(found) < len(names) {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagStructType && e.Tag != dwarf.TagTypedef {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if !want[name] || found[name] != nil {
			continue
		}
		t, err := d.Type(e.Offset)
		if err != nil {
			continue
		}
		if st, ok := underlying(t).(*dwarf.StructType); ok && !st.Incomplete {
			found[name] = st
		}
	}
	return found
}

// underlying strips typedefs and qualifiers.
func underlying(t dwarf.Type) dwarf.Type {
	for {
		switch tt := t.(type) {
		case *dwarf.TypedefType:
			t = tt.Type
		case *dwarf.QualType:
			t = tt.Type
		default:
			return t
		}
	}
}

// fieldOffset is the offset and type of the field at path ("raw_lock",
// "lock") inside st.
func fieldOffset(st *dwarf.StructType, path ...string) (int64, dwarf.Type, bool) {
	var off int64
	var t dwarf.Type = st
	for _, name := range path {
		s, ok := underlying(t).(*dwarf.StructType)
		if !ok {
			return 0, nil, false
		}
		var fld *dwarf.StructField
		for _, f := range s.Field {
			if f.Name == name {
				fld = f
				break
			}
		}
		if fld == nil {
			return 0, nil, false
		}
		off += fld.ByteOffset
		t = fld.Type
	}
	return off, t, true
}

// pathWalk is one lookup, with the machine stopped.
type pathWalk struct {
	k *Kernel
	l *dentryLayout
}

func (w *pathWalk) u64(addr uint64) (uint64, error) {
	v, err := w.k.Read64(addr)
	if err != nil {
		return 0, fmt.Errorf("%w: reading the guest's dentry tree: %w", syscall.EIO, err)
	}
	return v, nil
}

// locked reports whether a CPU holds dcache_lock.
func (w *pathWalk) locked() (bool, error) {
	v, err := w.k.Read32(w.l.dcacheLock)
	if err != nil {
		return false, fmt.Errorf("%w: reading dcache_lock: %w", syscall.EIO, err)
	}
	return v != 0, nil
}

// inodeOf is dentry->d_inode; a dentry in the tree always has one.
func (w *pathWalk) inodeOf(d uint64) (inode uint64, mode uint32, err error) {
	if inode, err = w.u64(d + uint64(w.l.dInode)); err != nil {
		return 0, 0, err
	}
	if inode == 0 {
		return 0, 0, fmt.Errorf("%w: dentry %#x in the tree has no inode", syscall.EIO, d)
	}
	buf := make([]byte, w.l.iModeSize)
	if err := w.k.ReadMem(inode+uint64(w.l.iMode), buf); err != nil {
		return 0, 0, fmt.Errorf("%w: reading i_mode: %w", syscall.EIO, err)
	}
	if len(buf) == 2 {
		return inode, uint32(binary.LittleEndian.Uint16(buf)), nil
	}
	return inode, binary.LittleEndian.Uint32(buf), nil
}

func (w *pathWalk) lookup(path string) (GuestFile, error) {
	root, err := w.u64(w.l.rootDentry)
	if err != nil {
		return GuestFile{}, err
	}
	if root == 0 {
		return GuestFile{}, fmt.Errorf("%w: the guest has no root directory yet", syscall.ENOENT)
	}
	depth := 0
	d, err := w.walk(root, root, path, true, &depth)
	if err != nil {
		return GuestFile{}, err
	}
	inode, mode, err := w.inodeOf(d)
	if err != nil {
		return GuestFile{}, err
	}
	return GuestFile{Dentry: d, Inode: inode, Mode: mode}, nil
}

// walk is walk_locked: p from d (from root when p is absolute).
func (w *pathWalk) walk(root, d uint64, p string, follow bool, depth *int) (uint64, error) {
	if strings.HasPrefix(p, "/") {
		d = root
	}
	p = strings.TrimLeft(p, "/")
	for p != "" {
		name, rest, _ := strings.Cut(p, "/")
		p = strings.TrimLeft(rest, "/")
		_, mode, err := w.inodeOf(d)
		if err != nil {
			return 0, err
		}
		if mode&sIFMT != sIFDIR {
			return 0, fmt.Errorf("%w: %s", syscall.ENOTDIR, name)
		}
		next, err := w.child(d, name)
		if err != nil {
			return 0, err
		}
		if next == 0 {
			return 0, fmt.Errorf("%w: %s", syscall.ENOENT, name)
		}
		inode, mode, err := w.inodeOf(next)
		if err != nil {
			return 0, err
		}
		if mode&sIFMT == sIFLNK && (p != "" || follow) {
			if *depth++; *depth > guestMaxSymlinks {
				return 0, fmt.Errorf("%w: %s", syscall.ELOOP, name)
			}
			target, err := w.u64(inode + uint64(w.l.iPrivate))
			if err != nil {
				return 0, err
			}
			s, err := w.k.ReadString(target, guestPathMax)
			if err != nil {
				return 0, fmt.Errorf("%w: reading the target of %s: %w", syscall.EIO, name, err)
			}
			if next, err = w.walk(root, d, s, true, depth); err != nil {
				return 0, err
			}
		}
		d = next
	}
	return d, nil
}

// child is d_lookup: name in directory d, 0 when there is none.
func (w *pathWalk) child(dir uint64, name string) (uint64, error) {
	switch name {
	case ".":
		return dir, nil
	case "..":
		return w.u64(dir + uint64(w.l.dParent))
	}
	if int64(len(name)) >= w.l.dNameLen {
		return 0, nil // no d_name holds it
	}
	head := dir + uint64(w.l.dSubdirs)
	buf := make([]byte, w.l.dNameLen)
	n, err := w.u64(head + uint64(w.l.listNext))
	for i := 0; err == nil && n != head; i++ {
		if i == maxDirEntries {
			return 0, fmt.Errorf("%w: directory %#x: its list of entries does not end", syscall.EIO, dir)
		}
		c := n - uint64(w.l.dChild)
		if err := w.k.ReadMem(c+uint64(w.l.dName), buf); err != nil {
			return 0, fmt.Errorf("%w: reading d_name: %w", syscall.EIO, err)
		}
		got := buf
		if j := bytes.IndexByte(buf, 0); j >= 0 {
			got = buf[:j]
		}
		if string(got) == name {
			return c, nil
		}
		n, err = w.u64(n + uint64(w.l.listNext))
	}
	return 0, err
}
