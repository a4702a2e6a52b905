package tracing_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

const sysFilterMsg = "### global filter ###\n" +
	"# Use this to set filters for multiple events.\n" +
	"# Only events with the given fields will be affected.\n" +
	"# If no events are modified, an error message will be displayed here\n"

// badSubsys is what an event the group's filter could not be set on
// shows in its filter file (and the extra newline print_event_filter
// adds), as Linux 6.1 shows it.
func badSubsys(s string) string {
	return s + "\n^\nparse_error: Couldn't find or set field in one of a subsystem's events\n\n"
}

// TestSubsystemFilter checks events/GROUP/filter against Linux 6.1's
// transcript (shared/oracle, "subsystem filter"): every event of the
// group gets the string, set where it parses and in error where it does
// not, the write succeeds either way, and "0" clears them all.
func TestSubsystemFilter(t *testing.T) {
	f := setup(t)
	for _, l := range []string{
		"p:myp vfs_read count=%x2 buf=%x1",
		"p:myq vfs_write cnt=%x2 buf=+0(%x1):string",
		"r:myr vfs_read ret=$retval",
		"p:grp2/other vfs_write",
	} {
		if err := f.write("tracing/kprobe_events", l, false); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	const g = "tracing/events/kprobes/"
	tests := []struct {
		name          string
		write         string
		myp, myq, myr string // the events' filter files after it; "" is badSubsys
		errlog        int    // error_log entries it adds
	}{
		{"a field of one event", "count > 0\n", "count > 0\n", "", "", 2},
		{"a common field", "common_pid != 0\n", "common_pid != 0\n", "common_pid != 0\n", "common_pid != 0\n", 0},
		{"a syntax error fails everywhere", "count >\n", "", "", "", 3},
		{"unbalanced", "(count > 0\n", "", "", "", 3},
		{"a string field", "buf ~ \"*a*\"\n", "", "buf ~ \"*a*\"\n", "", 2},
		{"leading blanks stay", "  cnt > 1  \n", "", "  cnt > 1\n", "", 2},
		{"empty", "\n", "", "", "", 3},
		{"0 clears", "0\n", "none\n", "none\n", "none\n", 0},
		{"a blank 0 clears", "  0  \n", "none\n", "none\n", "none\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := f.write("tracing/error_log", "", true); err != nil {
				t.Fatal(err)
			}
			if err := f.write(g+"filter", tt.write, true); err != nil {
				t.Fatalf("write %q: %v", tt.write, err)
			}
			s := strings.TrimRight(tt.write, " \n")
			for ev, want := range map[string]string{"myp": tt.myp, "myq": tt.myq, "myr": tt.myr} {
				if want == "" {
					want = badSubsys(s)
				}
				if got := f.read(t, g+ev+"/filter"); got != want {
					t.Errorf("%s/filter = %q, want %q", ev, got, want)
				}
			}
			if got := f.read(t, g+"filter"); got != sysFilterMsg {
				t.Errorf("kprobes/filter = %q", got)
			}
			if got := f.read(t, "tracing/events/grp2/other/filter"); got != "none\n" {
				t.Errorf("another group's event: filter %q", got)
			}
			log := f.read(t, "tracing/error_log")
			if n := strings.Count(log, "event filter parse error: error: Couldn't find or set field in one of a subsystem's events\n  Command: "+s+"\n           ^\n"); n != tt.errlog {
				t.Errorf("error_log has %d entries, want %d:\n%s", n, tt.errlog, log)
			}
		})
	}

	// An event filter replaced by the group's, and one the group's
	// clearing drops.
	if err := f.write(g+"myp/filter", "count > 0x10", true); err != nil {
		t.Fatal(err)
	}
	if err := f.write(g+"filter", "cnt == 1", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, g+"myp/filter"); got != badSubsys("cnt == 1") {
		t.Errorf("myp/filter after the group's = %q", got)
	}
	if err := f.write(g+"filter", "0", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, g+"myq/filter"); got != "none\n" {
		t.Errorf("myq/filter after 0 = %q", got)
	}
	// subsystem_filter_write refuses a page or more.
	if err := f.write(g+"filter", "common_pid == 1"+strings.Repeat(" ", 4096), true); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a 4 KiB write: %v, want EINVAL", err)
	}
	if got := f.read(t, g+"myp/filter"); got != "none\n" {
		t.Errorf("a refused write changed myp/filter: %q", got)
	}
	if err := f.write(g+"myp/filter", "common_pid == 1"+strings.Repeat(" ", 4096), true); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a 4 KiB event filter: %v, want EINVAL", err)
	}
	if got := f.read(t, g+"myp/filter"); got != "none\n" {
		t.Errorf("a refused write changed myp/filter: %q", got)
	}
}

// TestSubsystemFilterFilters checks that a group's filter filters: no
// record of an event whose filter matches nothing, records of one whose
// filter could not be set.
func TestSubsystemFilterFilters(t *testing.T) {
	f := setup(t)
	for _, l := range []string{"p:rd vfs_read count=%x2", "p:wr vfs_write cnt=%x2"} {
		if err := f.write("tracing/kprobe_events", l, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.write("tracing/events/kprobes/filter", "count == 12345", true); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/events/kprobes/enable", "1", true); err != nil {
		t.Fatal(err)
	}
	f.step(t, 3_000_000)
	trace := f.read(t, "tracing/trace")
	if strings.Contains(trace, " rd: (") {
		t.Error("rd's filter from the group let a hit through")
	}
	if !strings.Contains(trace, " wr: (") {
		t.Errorf("wr, whose filter failed, recorded nothing:\n%.1500s", trace)
	}
}

// TestHeaderFiles checks events/header_page and events/header_event
// against Linux 6.1 on arm64, and that they refuse writes.
func TestHeaderFiles(t *testing.T) {
	f := setup(t)
	for _, tt := range []struct{ file, want string }{
		{"header_page", "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n" +
			"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n" +
			"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n" +
			"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n"},
		{"header_event", "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n" +
			"\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n" +
			"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n"},
	} {
		p := "tracing/events/" + tt.file
		if got := f.read(t, p); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.file, got, tt.want)
		}
		if err := f.write(p, "x\n", true); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("writing %s: %v, want EINVAL", tt.file, err)
		}
	}
}
