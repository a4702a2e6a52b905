package tracing

import (
	"bytes"
	"context"
	"fmt"

	"github.com/kpemu/kpemu/debugfs"
)

// events/header_page and events/header_event: the layout of a ring
// buffer page and of an event's header, as trace_events.c's show_header
// prints them through ring_buffer_print_page_header() and
// ring_buffer_print_entry_header() (ring_buffer.c). Tools that read the
// binary buffer (trace-cmd, perf) parse them; kpemu's buffer keeps
// Linux's page size (ringbuf.go), so the text is Linux 6.1's on arm64.

// showHeaderPage is ring_buffer_print_page_header: buffer_data_page's
// time stamp, its commit (a local_t, with the overwrite flag in the
// same word) and the data, BUF_PAGE_SIZE bytes.
func showHeaderPage(_ context.Context, w *bytes.Buffer) error {
	fmt.Fprintf(w, "\tfield: u64 timestamp;\toffset:0;\tsize:%d;\tsigned:%d;\n", 8, 0)
	fmt.Fprintf(w, "\tfield: local_t commit;\toffset:%d;\tsize:%d;\tsigned:%d;\n", 8, 8, 1)
	fmt.Fprintf(w, "\tfield: int overwrite;\toffset:%d;\tsize:%d;\tsigned:%d;\n", 8, 1, 1)
	fmt.Fprintf(w, "\tfield: char data;\toffset:%d;\tsize:%d;\tsigned:%d;\n", 16, bufPageSize, 0)
	return nil
}

// headerEvent is ring_buffer_print_entry_header's text: struct
// ring_buffer_event's bit fields and its type_len codes
// (RINGBUF_TYPE_PADDING, TIME_EXTEND, TIME_STAMP, RINGBUF_TYPE_DATA_TYPE_LEN_MAX).
const headerEvent = "# compressed entry header\n" +
	"\ttype_len    :    5 bits\n" +
	"\ttime_delta  :   27 bits\n" +
	"\tarray       :   32 bits\n" +
	"\n" +
	"\tpadding     : type == 29\n" +
	"\ttime_extend : type == 30\n" +
	"\ttime_stamp : type == 31\n" +
	"\tdata max type_len  == 28\n"

// headerFileOps are the read-only operations of the two files; a write
// is EINVAL, as on a tracefs file without a write method.
func headerFileOps() (page, event debugfs.FileOps) {
	return debugfs.FileOps{Show: showHeaderPage},
		debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { w.WriteString(headerEvent); return nil }}
}
