package kpemufs

import (
	"context"
	"errors"
	"fmt"
	"path"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/debugfs"
)

func TestSysctls(t *testing.T) {
	// Each case runs on a fresh tree: writes, in order, then the file's
	// content. An errno fails its write and changes nothing.
	type write struct {
		file, data string
		err        error
	}
	tests := []struct {
		name   string
		writes []write
		file   string
		want   string
		turned []bool // the ftrace_enabled changes kpemu acted on
	}{
		{"ftrace_enabled default", nil, "ftrace_enabled", "1\n", nil},
		{"perf_event_paranoid default", nil, "perf_event_paranoid", "2\n", nil},
		{"sched_rt_runtime_us default", nil, "sched_rt_runtime_us", "950000\n", nil},
		{"ftrace_enabled 0", []write{{"ftrace_enabled", "0\n", nil}}, "ftrace_enabled", "0\n", []bool{false}},
		{"ftrace_enabled 0 then 1", []write{{"ftrace_enabled", "0", nil}, {"ftrace_enabled", "0", nil}, {"ftrace_enabled", "1", nil}},
			"ftrace_enabled", "1\n", []bool{false, true}},
		{"any int", []write{{"ftrace_enabled", "  7\n", nil}}, "ftrace_enabled", "7\n", nil},
		{"hex", []write{{"traceoff_on_warning", "0x10", nil}}, "traceoff_on_warning", "16\n", nil},
		{"negative", []write{{"perf_event_paranoid", "-1\n", nil}}, "perf_event_paranoid", "-1\n", nil},
		{"not a number", []write{{"ftrace_enabled", "abc\n", syscall.EINVAL}}, "ftrace_enabled", "1\n", nil},
		{"trailing junk", []write{{"ftrace_enabled", "1x\n", syscall.EINVAL}}, "ftrace_enabled", "1\n", nil},
		{"empty", []write{{"ftrace_enabled", "\n", syscall.EINVAL}}, "ftrace_enabled", "1\n", nil},
		{"beyond int", []write{{"ftrace_enabled", "2147483648", syscall.EINVAL}}, "ftrace_enabled", "1\n", nil},
		{"int min", []write{{"ftrace_dump_on_oops", "-2147483648", nil}}, "ftrace_dump_on_oops", "-2147483648\n", nil},
		{"kptr_restrict range", []write{{"kptr_restrict", "2", nil}, {"kptr_restrict", "3", syscall.EINVAL}}, "kptr_restrict", "2\n", nil},
		{"rt runtime -1", []write{{"sched_rt_runtime_us", "-1\n", nil}}, "sched_rt_runtime_us", "-1\n", nil},
		{"rt runtime -2", []write{{"sched_rt_runtime_us", "-2\n", syscall.EINVAL}}, "sched_rt_runtime_us", "950000\n", nil},
		{"rt runtime above period", []write{{"sched_rt_runtime_us", "1000001", syscall.EINVAL}}, "sched_rt_runtime_us", "950000\n", nil},
		{"rt period below runtime", []write{{"sched_rt_period_us", "900000", syscall.EINVAL}}, "sched_rt_period_us", "1000000\n", nil},
		{"rt period 0", []write{{"sched_rt_runtime_us", "-1", nil}, {"sched_rt_period_us", "0", syscall.EINVAL}}, "sched_rt_period_us", "1000000\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := debugfs.NewTree()
			var turned []bool
			if err := registerSysctls(tree, func(on bool) error { turned = append(turned, on); return nil }); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.writes {
				f, err := tree.LookupFile(path.Join(SysctlDir, w.file))
				if err != nil {
					t.Fatal(err)
				}
				n, err := f.Ops().Write(context.Background(), []byte(w.data), 0)
				if !errors.Is(err, w.err) || (err == nil && n != len(w.data)) {
					t.Fatalf("write %q to %s = %d, %v; want %d, %v", w.data, w.file, n, err, len(w.data), w.err)
				}
			}
			got, err := tree.ReadFile(path.Join(SysctlDir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("%s = %q, want %q", tt.file, got, tt.want)
			}
			if fmt.Sprint(turned) != fmt.Sprint(tt.turned) {
				t.Errorf("function tracing turned %v, want %v", turned, tt.turned)
			}
		})
	}
}
