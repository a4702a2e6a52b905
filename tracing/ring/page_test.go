package ring

import (
	"encoding/binary"
	"testing"
)

// rec is what the page tests record: a time stamp and a payload size.
type rec struct {
	ts uint64
	n  int
}

// encodeRec fills the record with its size's low byte, so that a
// decoded record shows where it came from.
func encodeRec(e *rec, out []byte) []byte {
	for i := 0; i < e.n; i++ {
		out = append(out, byte(e.n))
	}
	return out
}

// decoded is an event as a reader of header_page and header_event
// finds it.
type decoded struct {
	ts   uint64
	data []byte
}

// decodePage reads a buffer_data_page as kbuffer does: the header, then
// events by type_len, time extends added to the running time.
func decodePage(t *testing.T, p []byte) (evs []decoded, flags uint64, missed uint64) {
	t.Helper()
	if len(p) != 4096 {
		t.Fatalf("page of %d bytes", len(p))
	}
	ts := binary.LittleEndian.Uint64(p)
	commit := binary.LittleEndian.Uint64(p[8:])
	flags = commit & (MissedEvents | MissedStored)
	size := int(commit &^ (MissedEvents | MissedStored))
	data := p[16:]
	if flags&MissedStored != 0 {
		missed = binary.LittleEndian.Uint64(data[size:])
	}
	for off := 0; off < size; {
		h := binary.LittleEndian.Uint32(data[off:])
		typ, delta := h&31, uint64(h>>5)
		switch {
		case typ == 29: // padding
			t.Fatalf("padding inside the commit at %d", off)
		case typ == 30: // time extend
			ts += delta | uint64(binary.LittleEndian.Uint32(data[off+4:]))<<27
			off += 8
		case typ == 31:
			t.Fatalf("absolute time stamp at %d", off)
		case typ == 0:
			l := int(binary.LittleEndian.Uint32(data[off+4:])) - 4
			ts += delta
			evs = append(evs, decoded{ts, data[off+8 : off+8+l]})
			off += 8 + l
		default:
			l := int(typ) * 4
			ts += delta
			evs = append(evs, decoded{ts, data[off+4 : off+4+l]})
			off += 4 + l
		}
	}
	for _, c := range data[size+int(flags>>30&1)*8:] {
		if c != 0 {
			t.Fatalf("bytes after the commit are not zero")
		}
	}
	return evs, flags, missed
}

func TestReadPage(t *testing.T) {
	type want struct {
		ts []uint64
		n  []int
	}
	tests := []struct {
		name   string
		recs   []rec
		pages  int
		size   int // the read's count
		reads  []want
		missed []uint64 // per read
	}{
		{name: "small events", recs: []rec{{10, 16}, {11, 24}, {20, 5}}, pages: 2, size: 4096,
			reads: []want{{[]uint64{10, 11, 20}, []int{16, 24, 5}}}, missed: []uint64{0}},
		{name: "a time extend", recs: []rec{{10, 16}, {10 + 1<<27, 16}, {10 + 1<<28 + 3, 8}}, pages: 2, size: 4096,
			reads: []want{{[]uint64{10, 10 + 1<<27, 10 + 1<<28 + 3}, []int{16, 16, 8}}}, missed: []uint64{0}},
		{name: "a length word", recs: []rec{{1, 113}, {2, 200}, {3, 0}}, pages: 2, size: 4096,
			reads: []want{{[]uint64{1, 2, 3}, []int{113, 200, 0}}}, missed: []uint64{0}},
		{name: "a short read takes what fits", recs: []rec{{1, 16}, {2, 16}, {3, 16}}, pages: 2, size: 16 + 45,
			reads: []want{{[]uint64{1, 2}, []int{16, 16}}, {[]uint64{3}, []int{16}}}, missed: []uint64{0, 0}},
		{name: "one page a read", recs: manyRecs(300, 16), pages: 4, size: 8192,
			reads: []want{{stamps(1, 204), sizes(204, 16)}, {stamps(205, 96), sizes(96, 16)}}, missed: []uint64{0, 0}},
		// Four pages of 204: the 817th event overwrote the oldest
		// page. The first read's page is full, so Linux flags the
		// loss without room for its count (noCount).
		{name: "overrun is flagged", recs: manyRecs(1000, 16), pages: 4, size: 4096,
			reads:  []want{{stamps(205, 204), sizes(204, 16)}, {stamps(409, 204), sizes(204, 16)}, {stamps(613, 204), sizes(204, 16)}, {stamps(817, 184), sizes(184, 16)}},
			missed: []uint64{noCount, 0, 0, 0}},
		// A page with room after its events stores the count.
		{name: "overrun is counted", recs: append(manyRecs(204, 16), rec{205, 3000}, rec{206, 3000}), pages: 2, size: 4096,
			reads:  []want{{[]uint64{205}, []int{3000}}, {[]uint64{206}, []int{3000}}},
			missed: []uint64{204, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCPU[rec](tt.pages)
			for i := range tt.recs {
				if ok, _ := b.write(&tt.recs[i], tt.recs[i].ts, tt.recs[i].n, true); !ok {
					t.Fatalf("write %d dropped", i)
				}
			}
			for i, w := range tt.reads {
				page, ok := b.ReadPage(nil, tt.size, encodeRec)
				if !ok {
					t.Fatalf("read %d: nothing", i)
				}
				evs, flags, missed := decodePage(t, page)
				if len(evs) != len(w.ts) {
					t.Fatalf("read %d: %d events, want %d", i, len(evs), len(w.ts))
				}
				for j, e := range evs {
					if e.ts != w.ts[j] || len(e.data) < w.n[j] || (w.n[j] > 0 && e.data[0] != byte(w.n[j])) {
						t.Errorf("read %d event %d: ts %d len %d, want ts %d len %d", i, j, e.ts, len(e.data), w.ts[j], w.n[j])
					}
				}
				if flags == MissedEvents {
					missed = noCount
				}
				if missed != tt.missed[i] || (missed > 0) != (flags&MissedEvents != 0) {
					t.Errorf("read %d: missed %d flags %#x, want %d", i, missed, flags, tt.missed[i])
				}
			}
			if _, ok := b.ReadPage(nil, tt.size, encodeRec); ok {
				t.Errorf("a read after the last event found one")
			}
			if st := b.Stats(); st.Entries != 0 {
				t.Errorf("entries %d after reading everything", st.Entries)
			}
		})
	}
}

// A read too small for the header is Linux's -1, and consumes nothing.
func TestReadPageTooSmall(t *testing.T) {
	b := newCPU[rec](2)
	b.write(&rec{1, 16}, 1, 16, true)
	for _, size := range []int{0, 16, 16 + 19} {
		if _, ok := b.ReadPage(nil, size, encodeRec); ok {
			t.Errorf("size %d: read a page", size)
		}
	}
	if st := b.Stats(); st.Entries != 1 {
		t.Errorf("entries %d, want 1", st.Entries)
	}
}

// noCount is a page flagged RB_MISSED_EVENTS without RB_MISSED_STORED.
const noCount = ^uint64(0)

func manyRecs(n, size int) []rec {
	out := make([]rec, n)
	for i := range out {
		out[i] = rec{uint64(i + 1), size}
	}
	return out
}

func stamps(from uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = from + uint64(i)
	}
	return out
}

func sizes(n, size int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = size
	}
	return out
}

// A record larger than a page (an encoder that broke its accounting)
// is dropped rather than left to block every read after it.
func TestReadPageSkipsOversized(t *testing.T) {
	b := newCPU[rec](2)
	b.write(&rec{1, 16}, 1, 16, true)
	b.write(&rec{2, 16}, 2, 16, true)
	big := func(e *rec, out []byte) []byte {
		if e.ts == 1 {
			return append(out, make([]byte, PageSize)...)
		}
		return encodeRec(e, out)
	}
	page, ok := b.ReadPage(nil, FullPage, big)
	if !ok {
		t.Fatal("nothing read")
	}
	if evs, _, _ := decodePage(t, page); len(evs) != 1 || evs[0].ts != 2 {
		t.Errorf("read %v, want the second event alone", evs)
	}
}

// The rest of a page a read began is stamped as Linux's reader does:
// the page with the last event read, the next event with its delta.
func TestReadPageRestKeepsDelta(t *testing.T) {
	b := newCPU[rec](2)
	for _, ts := range []uint64{100, 107, 120} {
		b.write(&rec{ts, 16}, ts, 16, true)
	}
	if _, ok := b.ReadPage(nil, PageHeaderSize+20, encodeRec); !ok {
		t.Fatal("first read")
	}
	page, ok := b.ReadPage(nil, FullPage, encodeRec)
	if !ok {
		t.Fatal("second read")
	}
	ts := binary.LittleEndian.Uint64(page)
	h1 := binary.LittleEndian.Uint32(page[16:])
	h2 := binary.LittleEndian.Uint32(page[16+20:])
	if ts != 100 || h1>>5 != 7 || h2>>5 != 13 {
		t.Errorf("page ts %d, deltas %d %d; want 100, 7, 13", ts, h1>>5, h2>>5)
	}
}

// A full-page read (splice's) takes only pages the writer has left, each
// whole; the writer's page stays for a read(2) or for when it is left.
func TestReadFullPage(t *testing.T) {
	b := newCPU[rec](4)
	perPage := PageSize / 20 // 16-byte payloads take 20 bytes
	for i := range perPage + 3 {
		b.write(&rec{uint64(i + 1), 16}, uint64(i+1), 16, true)
	}
	page, ok := b.ReadFullPage(nil, encodeRec)
	if !ok {
		t.Fatal("the left page was not read")
	}
	if evs, _, _ := decodePage(t, page); len(evs) != perPage {
		t.Errorf("full page holds %d events, want %d", len(evs), perPage)
	}
	if _, ok := b.ReadFullPage(nil, encodeRec); ok {
		t.Error("read the writer's page as full")
	}
	if page, ok := b.ReadPage(nil, FullPage, encodeRec); !ok {
		t.Error("read(2) did not take the writer's page")
	} else if evs, _, _ := decodePage(t, page); len(evs) != 3 {
		t.Errorf("writer's page holds %d events, want 3", len(evs))
	}
}

// WatermarkHit is rb_watermark_hit: any event for 0; for a percentage,
// the pages left unread, one more, against the buffer's pages.
func TestWatermarkHit(t *testing.T) {
	perPage := PageSize / 20
	tests := []struct {
		name   string
		events int
		full   int
		want   bool
	}{
		{"empty, 0", 0, 0, false},
		{"one event, 0", 1, 0, true},
		{"one event, 1%", 1, 1, false}, // on the writer's page
		{"one page left of 4, 50%", perPage + 1, 50, true},
		{"one page left of 4, 51%", perPage + 1, 51, false},
		{"two pages left of 4, 75%", 2*perPage + 1, 75, true},
		{"three pages left of 4, 100%", 3*perPage + 1, 100, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCPU[rec](4)
			for i := range tt.events {
				b.write(&rec{uint64(i + 1), 16}, uint64(i+1), 16, true)
			}
			if got := b.WatermarkHit(tt.full); got != tt.want {
				t.Errorf("WatermarkHit(%d) = %v, want %v", tt.full, got, tt.want)
			}
		})
	}
}

// A watermark waiter is woken when a writer leaves a page, not at every
// event, and by WakeAll.
func TestFullWaiter(t *testing.T) {
	rb := New[rec](1, 4*PageSize)
	w := rb.FullWaiter()
	rb.Write(0, &rec{1, 16}, 1, 16)
	select {
	case <-w:
		t.Fatal("woken by an event on the same page")
	default:
	}
	for i := range PageSize / 20 {
		rb.Write(0, &rec{uint64(i + 2), 16}, uint64(i+2), 16)
	}
	select {
	case <-w:
	default:
		t.Fatal("not woken when the writer left a page")
	}
	w = rb.FullWaiter()
	rb.WakeAll()
	select {
	case <-w:
	default:
		t.Fatal("not woken by WakeAll")
	}
}
