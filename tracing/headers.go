package tracing

import (
	"bytes"
	"context"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/tracing/ring"
)

// headerFileOps are the read-only operations of events/header_page and
// events/header_event (trace_events.c's show_header), the ring buffer's
// layout; a write is EINVAL, as on a tracefs file without a write method.
func headerFileOps() (page, event debugfs.FileOps) {
	return debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { ring.WritePageHeader(w); return nil }},
		debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { w.WriteString(ring.EntryHeader); return nil }}
}
