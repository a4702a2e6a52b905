package kprobes

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
)

// RegisterFiles creates debugfs's kprobes/ directory in tree: list (0400),
// enabled (0600) and blacklist (0400), as Linux's debugfs_kprobe_init.
func (kp *Kprobes) RegisterFiles(tree *debugfs.Tree) error {
	dir, err := tree.MkdirAll("kprobes", 0o755)
	if err != nil {
		return fmt.Errorf("creating kprobes/: %w", err)
	}
	files := []struct {
		name string
		mode fs.FileMode
		ops  debugfs.FileOps
	}{
		{"list", 0o400, debugfs.FileOps{Show: kp.showList}},
		{"enabled", 0o600, debugfs.FileOps{Show: kp.showEnabled, Write: kp.writeEnabled}},
		{"blacklist", 0o400, debugfs.FileOps{Show: kp.showBlacklist}},
	}
	for _, f := range files {
		if _, err := dir.CreateFile(f.name, f.mode, f.ops); err != nil {
			return fmt.Errorf("creating kprobes/%s: %w", f.name, err)
		}
	}
	return nil
}

func (kp *Kprobes) showList(_ context.Context, w *bytes.Buffer) error {
	w.Write(kp.listText())
	return nil
}

func (kp *Kprobes) showBlacklist(_ context.Context, w *bytes.Buffer) error {
	for _, e := range kp.Blacklist() {
		w.WriteString(e.String())
	}
	return nil
}

func (kp *Kprobes) showEnabled(_ context.Context, w *bytes.Buffer) error {
	if kp.Armed() {
		w.WriteString("1\n")
	} else {
		w.WriteString("0\n")
	}
	return nil
}

// writeEnabled is write_enabled_file_bool: kstrtobool_from_user, then arm
// or disarm everything. The whole count is consumed on success.
func (kp *Kprobes) writeEnabled(_ context.Context, p []byte, _ int64) (int, error) {
	on, err := KstrToBool(p)
	if err != nil {
		return 0, err
	}
	if on {
		err = kp.ArmAll()
	} else {
		err = kp.DisarmAll()
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// KstrToBool is Linux 6.1's kstrtobool_from_user: it looks at no more than
// the first three bytes; y/Y/t/T/1 and on are true, n/N/f/F/0 and off (or
// just "of") are false, anything else is EINVAL.
func KstrToBool(p []byte) (bool, error) {
	var s [4]byte
	copy(s[:3], p)
	switch s[0] {
	case 'y', 'Y', 't', 'T', '1':
		return true, nil
	case 'n', 'N', 'f', 'F', '0':
		return false, nil
	case 'o', 'O':
		switch s[1] {
		case 'n', 'N':
			return true, nil
		case 'f', 'F':
			return false, nil
		}
	}
	return false, syscall.EINVAL
}
