package ring

import (
	"fmt"
	"io"
)

// The layout of a buffer page and of an event's header, as
// ring_buffer_print_page_header() and ring_buffer_print_entry_header()
// print them for events/header_page and events/header_event. Tools that
// read the binary buffer (trace-cmd, perf) parse them; the buffer keeps
// Linux's page size, so the text is Linux 6.1's on arm64.

// WritePageHeader is ring_buffer_print_page_header: buffer_data_page's
// time stamp, its commit (a local_t, with the overwrite flag in the
// same word) and the data, BUF_PAGE_SIZE bytes.
func WritePageHeader(w io.Writer) {
	fmt.Fprintf(w, "\tfield: u64 timestamp;\toffset:0;\tsize:%d;\tsigned:%d;\n", 8, 0)
	fmt.Fprintf(w, "\tfield: local_t commit;\toffset:%d;\tsize:%d;\tsigned:%d;\n", 8, 8, 1)
	fmt.Fprintf(w, "\tfield: int overwrite;\toffset:%d;\tsize:%d;\tsigned:%d;\n", 8, 1, 1)
	fmt.Fprintf(w, "\tfield: char data;\toffset:%d;\tsize:%d;\tsigned:%d;\n", 16, PageSize, 0)
}

// EntryHeader is ring_buffer_print_entry_header's text: struct
// ring_buffer_event's bit fields and its type_len codes
// (RINGBUF_TYPE_PADDING, TIME_EXTEND, TIME_STAMP, RINGBUF_TYPE_DATA_TYPE_LEN_MAX).
const EntryHeader = "# compressed entry header\n" +
	"\ttype_len    :    5 bits\n" +
	"\ttime_delta  :   27 bits\n" +
	"\tarray       :   32 bits\n" +
	"\n" +
	"\tpadding     : type == 29\n" +
	"\ttime_extend : type == 30\n" +
	"\ttime_stamp : type == 31\n" +
	"\tdata max type_len  == 28\n"
