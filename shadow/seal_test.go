package shadow

import "testing"

func TestMountTable(t *testing.T) {
	tests := []struct {
		path, proc, file string
		ok               bool
	}{
		{"/proc/mounts", "self", "mounts", true},
		{"/proc/self/mounts", "self", "mounts", true},
		{"/proc/self/mountinfo", "self", "mountinfo", true},
		{"/proc/thread-self/mountinfo", "thread-self", "mountinfo", true},
		{"/proc/123/mounts", "123", "mounts", true},
		{"/proc/123/task/124/mountinfo", "123", "mountinfo", true},
		{"/proc/./self/../mounts", "self", "mounts", true},
		{"/proc/self/mountstats", "", "", false},
		{"/proc/self/task/1/mounts", "self", "mounts", true},
		{"/proc/thread-self/task/1/mounts", "", "", false},
		{"/proc/1/task/self/mounts", "", "", false},
		{"/proc/0123/mounts", "", "", false},
		{"/proc/sys/mounts", "", "", false},
		{"/etc/mtab", "", "", false},
		{"/proc/mounts/x", "", "", false},
	}
	for _, tt := range tests {
		proc, file, ok := mountTable(tt.path)
		if proc != tt.proc || file != tt.file || ok != tt.ok {
			t.Errorf("mountTable(%q) = %q, %q, %v; want %q, %q, %v", tt.path, proc, file, ok, tt.proc, tt.file, tt.ok)
		}
	}
}

func TestRewriteTables(t *testing.T) {
	tests := []struct {
		name, in, want string
		rewrite        func(string) string
	}{
		{"mounts", "proc /proc proc rw,relatime 0 0\n" +
			"debugfs /sys/kernel/debug fuse.kpemu rw,nosuid,nodev,relatime,user_id=0,group_id=0,max_read=1048576 0 0\n" +
			"tracefs /sys/kernel/tracing fuse.kpemu rw,nosuid,nodev,relatime,user_id=0,group_id=0,default_permissions,allow_other 0 0\n" +
			"other /mnt fuse.kpemu rw 0 0\n" +
			"tracefs /mnt/t fuse.sshfs rw,user_id=0 0 0\n" +
			"debugfs /proc/kallsyms fuse.kpemu rw,user_id=0 0 0\n",
			"proc /proc proc rw,relatime 0 0\n" +
				"debugfs /sys/kernel/debug debugfs rw,nosuid,nodev,relatime 0 0\n" +
				"tracefs /sys/kernel/tracing tracefs rw,nosuid,nodev,relatime 0 0\n" +
				"other /mnt fuse.kpemu rw 0 0\n" +
				"tracefs /mnt/t fuse.sshfs rw,user_id=0 0 0\n",
			func(table string) string { return rewriteMounts(table, map[string]bool{"/proc/kallsyms": true}) }},
		{"mountinfo", "21 26 0:20 / /proc rw,relatime - proc proc rw\n" +
			"80 22 0:45 / /sys/kernel/tracing rw,nosuid,nodev,relatime shared:5 - fuse.kpemu tracefs rw,user_id=0,group_id=0,max_read=1048576\n" +
			"81 22 0:46 / /sys/kernel/debug rw,nosuid,nodev,relatime - fuse.kpemu debugfs rw,user_id=0,group_id=0\n" +
			"82 22 0:47 / /x rw - fuse.kpemu\n" +
			"83 21 0:46 /kpemu/kallsyms /proc/kallsyms rw - fuse.kpemu debugfs rw,user_id=0\n",
			"21 26 0:20 / /proc rw,relatime - proc proc rw\n" +
				"80 22 0:45 / /sys/kernel/tracing rw,nosuid,nodev,relatime shared:5 - tracefs tracefs rw\n" +
				"81 22 0:46 / /sys/kernel/debug rw,nosuid,nodev,relatime - debugfs debugfs rw\n" +
				"82 22 0:47 / /x rw - fuse.kpemu\n",
			rewriteMountinfo},
		{"no final newline", "tracefs /t fuse.kpemu rw,user_id=0 0 0", "tracefs /t tracefs rw 0 0",
			func(table string) string { return rewriteMounts(table, nil) }},
	}
	for _, tt := range tests {
		if got := tt.rewrite(tt.in); got != tt.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tt.name, got, tt.want)
		}
	}
	info := "81 22 0:46 / /sys/kernel/debug rw - fuse.kpemu debugfs rw\n" +
		"83 21 0:46 /kpemu/notes /sys/kernel/notes rw - fuse.kpemu debugfs rw\n" +
		"84 21 0:50 /kpemu/x /y rw - ext4 /dev/sda rw\n"
	if got := standInTargets(info); len(got) != 1 || !got["/sys/kernel/notes"] {
		t.Errorf("standInTargets = %v, want /sys/kernel/notes alone", got)
	}
}
