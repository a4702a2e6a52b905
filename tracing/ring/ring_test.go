package ring

import "testing"

// entry is what the tests record: a time stamp alone.
type entry struct{ ts uint64 }

// kprobeEventSize is a kprobe event without arguments: its trace_entry
// and ip, 16 bytes, which take 20 in a page.
const kprobeEventSize = 16

// rb_calculate_event_length on the sizes where its rules change.
func TestEventLength(t *testing.T) {
	for _, tt := range []struct{ payload, want int }{
		{0, 8},   // a zero payload counts as one byte
		{4, 8},   // header and one word
		{5, 16},  // 12 would look like a time extend and padding, so 16
		{8, 16},  // likewise
		{16, 20}, // a kprobe event without arguments
		{24, 28}, // a function tracer entry
		{112, 116},
		{113, 124}, // over RB_MAX_SMALL_DATA: the length word comes too
	} {
		if got := eventLength(tt.payload); got != tt.want {
			t.Errorf("eventLength(%d) = %d, want %d", tt.payload, got, tt.want)
		}
	}
	for _, tt := range []struct {
		size uint64
		want uint64
	}{{1, 2}, {1 << 10, 2}, {8 << 10, 3}, {100 << 10, 26}, {1408 << 10, 354}, {^uint64(0) &^ 1023, 2}} {
		if got := PagesFor(tt.size); got != tt.want {
			t.Errorf("PagesFor(%d) = %d, want %d", tt.size, got, tt.want)
		}
	}
}

// A two-page buffer (what buffer_size_kb 1 gives) filled with 20-byte
// events, 204 to a page: the counters as ring_buffer.c keeps them.
func TestCPUBufferAccounting(t *testing.T) {
	tests := []struct {
		name                      string
		n                         int
		overwrite                 bool
		entries, overrun, dropped uint64
		bytes                     int
		oldest                    uint64
	}{
		{"fits", 300, true, 300, 0, 0, 300 * 20, 1},
		{"two full pages", 408, true, 408, 0, 0, 8160, 1},
		// The 409th event moves onto the oldest page: its 204 go.
		{"wraps once", 500, true, 296, 204, 0, 4080 + 92*20, 205},
		{"wraps three times", 1000, true, 388, 612, 0, 4080 + 184*20, 613},
		// Without overwrite the writer drops its own events instead.
		{"no overwrite", 500, false, 408, 0, 92, 8160, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCPU[entry](2)
			for i := 1; i <= tt.n; i++ {
				e := entry{ts: uint64(i)}
				b.write(&e, e.ts, kprobeEventSize, tt.overwrite)
			}
			if got := b.count(); got != tt.entries {
				t.Errorf("entries %d, want %d", got, tt.entries)
			}
			if b.overrun != tt.overrun || b.dropped != tt.dropped {
				t.Errorf("overrun %d dropped %d, want %d %d", b.overrun, b.dropped, tt.overrun, tt.dropped)
			}
			if got := b.bytes(); got != tt.bytes {
				t.Errorf("bytes %d, want %d", got, tt.bytes)
			}
			if got := b.pages[b.head].ts; got != tt.oldest {
				t.Errorf("oldest ts %d, want %d", got, tt.oldest)
			}
			if b.entries != uint64(tt.n)-tt.dropped {
				t.Errorf("committed %d, want %d", b.entries, uint64(tt.n)-tt.dropped)
			}
		})
	}
}

// A delta of 2^27 time units from the previous event needs an 8-byte
// time extend; the first event of a page never does; a payload over a
// page's room is dropped; a page an event does not fit is padded, and
// the padding counts in bytes when a padding event fits there.
func TestCPUBufferTimeExtendAndPadding(t *testing.T) {
	b := newCPU[entry](4)
	write := func(ts uint64, payload int) bool {
		e := entry{ts: ts}
		ok, _ := b.write(&e, ts, payload, true)
		return ok
	}
	write(1<<40, 16)                // first of the page: 20
	write(1<<40+tsDeltaLimit-1, 16) // fits the 27 bits: 20
	write(1<<40+2*tsDeltaLimit, 16) // needs an extend: 28
	if got := b.bytes(); got != 68 {
		t.Errorf("bytes %d, want 68", got)
	}
	if write(1, MaxDataSize+1) {
		t.Error("a payload over BUF_MAX_DATA_SIZE was written")
	}
	// 68 bytes and a 4012-byte event fill page 0 exactly; the next
	// event goes on page 1 with nothing to pad.
	write(1<<40+2*tsDeltaLimit, 4004)
	if b.tail != 0 || b.pages[0].write != 4080 {
		t.Fatalf("tail page %d at %d, want page 0 full", b.tail, b.pages[0].write)
	}
	write(1<<40+2*tsDeltaLimit, 16)
	if b.tail != 1 || b.bytes() != 4080+20 {
		t.Errorf("tail %d bytes %d, want 1, 4100", b.tail, b.bytes())
	}
	// A 4000-byte event leaves page 1 60 bytes, which a 100-byte event
	// does not fit: padding, counted, closes the page.
	write(1<<40+2*tsDeltaLimit, 3992)
	write(1<<40+2*tsDeltaLimit, 96)
	if b.tail != 2 || b.bytes() != 4080+4080+100 {
		t.Errorf("tail %d bytes %d, want 2, %d", b.tail, b.bytes(), 4080+4080+100)
	}
}

// Resizing keeps the newest pages: growing keeps everything, shrinking
// drops the oldest pages and counts their entries as overrun.
func TestCPUBufferResize(t *testing.T) {
	b := newCPU[entry](4)
	for i := 1; i <= 204*3+10; i++ {
		e := entry{ts: uint64(i)}
		b.write(&e, e.ts, kprobeEventSize, true)
	}
	b.Resize(8)
	if b.count() != 622 || b.overrun != 0 || len(b.pages) != 8 {
		t.Fatalf("grown: %d entries %d overrun %d pages", b.count(), b.overrun, len(b.pages))
	}
	b.Resize(2)
	if b.count() != 214 || b.overrun != 408 || b.pages[b.head].ts != 409 {
		t.Errorf("shrunk: %d entries %d overrun oldest %d, want 214 408 409", b.count(), b.overrun, b.pages[b.head].ts)
	}
}
