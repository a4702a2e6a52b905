package tracing

import (
	"sync"
	"sync/atomic"
)

// The ring buffer behind trace, trace_pipe and per_cpu/cpuN/, after Linux
// 6.1's kernel/trace/ring_buffer.c: one buffer per CPU, each a ring of
// pages that the CPU's events fill in order, so that buffer_size_kb,
// stats and the overrun counts mean what they mean on Linux.
//
// What is Linux's here: the page size (BUF_PAGE_SIZE, a 4 KiB page less
// its 16-byte header), the pages a size in KiB becomes (at least two),
// the length of an event (rb_calculate_event_length: a 4-byte header, the
// payload rounded up to 4, 4 more bytes for a payload over 112, 8 more
// for a time extend when the delta from the CPU's previous event does not
// fit the header's 27 bits), the padding that closes a page an event does
// not fit, and the counters (entries, overrun, commit overrun, bytes,
// dropped events, read events) with Linux's arithmetic: in overwrite mode
// a writer that comes round to the oldest page drops that whole page and
// counts its entries as overrun; otherwise it drops its own event and
// counts it in dropped events.
//
// An event's payload is its record as Linux lays it out (trace.go's
// sizes: the 8-byte trace_entry, the probe's ip or ips, the arguments,
// the bytes of the strings fetched), except that a trace_printk counts
// its formatted text where Linux stores vbin_printf's binary arguments.
//
// What is simpler: there is no separate reader page. Linux's consuming
// reader swaps the oldest page out of the ring, which keeps up to one
// page more while a reader is active; here the reader consumes entries
// in place and a page returns to the ring when it is read to its end.
// Events from interrupts that nest inside a write cannot happen (a vCPU
// records one event at a time), so commit overrun stays 0.

// Sizes from ring_buffer.c (64-bit, 4 KiB pages).
const (
	bufPageSize      = 4096 - 16       // BUF_PAGE_SIZE: PAGE_SIZE less the time stamp and commit of buffer_data_page
	bufMaxDataSize   = bufPageSize - 8 // BUF_MAX_DATA_SIZE: the largest payload
	rbEvntHdrSize    = 4               // RB_EVNT_HDR_SIZE: type_len:5, time_delta:27
	rbMaxSmallData   = 4 * 28          // RB_MAX_SMALL_DATA: larger payloads keep their length in array[0]
	rbLenTimeExtend  = 8               // RB_LEN_TIME_EXTEND
	rbEvntMinSize    = 8               // RB_EVNT_MIN_SIZE: the smallest padding event
	tsDeltaLimit     = 1 << 27         // a delta this large needs a time extend (test_time_stamp)
	minBufferPages   = 2               // ring_buffer_resize: "we need a minimum of two pages"
	traceBufSizeBoot = 1               // the per-CPU size before expansion (tracer_alloc_buffers: 1 byte, so two pages)
	// traceBufSizeDefault is TRACE_BUF_SIZE_DEFAULT, the per-CPU size in
	// bytes the buffer expands to when tracing is first used.
	traceBufSizeDefault = 1441792
)

// eventLength is rb_calculate_event_length: the bytes an event with a
// payload of n bytes takes in a page, without a time extend.
func eventLength(n int) int {
	if n == 0 {
		n = 1
	}
	if n > rbMaxSmallData {
		n += 4
	}
	n = (n + rbEvntHdrSize + 3) &^ 3
	if n == rbLenTimeExtend+4 {
		n += 4
	}
	return n
}

// pagesFor is the number of pages ring_buffer_resize gives size bytes
// (DIV_ROUND_UP in unsigned long, which wraps as Go's uint64 does).
func pagesFor(size uint64) uint64 {
	return max((size+bufPageSize-1)/bufPageSize, minBufferPages)
}

// rbPage is a buffer_page: the events of one page, in order.
type rbPage struct {
	ts        uint64 // buffer_data_page.time_stamp: the first event's
	entries   []traceEntry
	write     int // bytes used: where the next event goes
	commit    int // bytes entries_bytes counts: the events' and any padding event's
	read      int // entries a consuming reader took
	readBytes int // the bytes of those
}

// reset empties p for reuse. The entries' array is kept, and what it
// still refers to (texts, stacks) is overwritten as the page fills
// again: at most a buffer's worth, not worth a clear per page.
func (p *rbPage) reset() {
	p.entries = p.entries[:0]
	p.ts, p.write, p.commit, p.read, p.readBytes = 0, 0, 0, 0, 0
}

// pad is rb_reset_tail: the rest of the page is padding, which
// entries_bytes counts when a padding event fits there.
func (p *rbPage) pad() {
	if rest := bufPageSize - p.write; rest >= rbEvntMinSize {
		p.commit += rest
	}
	p.write = bufPageSize
}

// unread is the number of entries on p a consuming reader has not taken.
func (p *rbPage) unread() int { return len(p.entries) - p.read }

// cpuBuffer is a ring_buffer_per_cpu.
type cpuBuffer struct {
	mu sync.Mutex // the reader_lock and the writer's exclusion in one
	// recordOff is ring_buffer_record_disable_cpu: tracing_cpumask
	// leaves the CPU out (infofiles.go). It stays with the live buffer
	// through snapshot swaps.
	recordOff atomic.Bool
	rbState
}

// rbState is everything of a cpuBuffer but its lock: what a snapshot
// swaps between the live buffer and the snapshot buffer (snapshot.go),
// as Linux swaps the buffers whole.
type rbState struct {
	pages []*rbPage // the ring; its length is the buffer's page count
	head  int       // the oldest page
	tail  int       // the page being written

	writeStamp uint64 // the last event's time stamp, for time extends

	// Linux's counters, zeroed by reset: entries counts every event
	// committed, so the buffer holds entries - overrun - read of them.
	entries, overrun, commitOverrun, dropped, read uint64
	lastOverrun                                    uint64 // overrun at the last consuming read: what "[LOST n EVENTS]" reports
}

func newCPUBuffer(pages int) *cpuBuffer {
	b := &cpuBuffer{}
	b.setPages(pages)
	return b
}

func (b *cpuBuffer) setPages(n int) {
	b.pages = make([]*rbPage, n)
	for i := range b.pages {
		b.pages[i] = &rbPage{}
	}
	b.head, b.tail = 0, 0
}

// sizeBytes is the buffer's size as buffer_size_kb accounts it
// (data->entries: nr_pages * BUF_PAGE_SIZE); b.mu is held.
func (b *cpuBuffer) sizeBytes() uint64 { return uint64(len(b.pages)) * bufPageSize }

// write is ring_buffer_lock_reserve and ring_buffer_unlock_commit for an
// event of payload bytes at time ts: it reports false when the event was
// not written (no room without overwrite, or too big).
func (b *cpuBuffer) write(e *traceEntry, payload int, overwrite bool) bool {
	if payload > bufMaxDataSize {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	length := eventLength(payload)
	p := b.pages[b.tail]
	extend := func() int {
		// The first event of a page is stamped by the page.
		if p.write > 0 && e.ts >= b.writeStamp && e.ts-b.writeStamp >= tsDeltaLimit {
			return rbLenTimeExtend
		}
		return 0
	}
	if p.write+length+extend() > bufPageSize {
		// rb_move_tail: on to the next page, unless it is the oldest
		// and the buffer may not overwrite.
		next := (b.tail + 1) % len(b.pages)
		if next == b.head {
			if !overwrite {
				// Dropped; the page is padded all the same, once
				// (rb_move_tail's out_reset).
				b.dropped++
				p.pad()
				return false
			}
			// rb_handle_head_page: the oldest page goes, its unread
			// entries counted as overrun.
			hp := b.pages[b.head]
			b.overrun += uint64(hp.unread())
			hp.reset()
			b.head = (b.head + 1) % len(b.pages)
		}
		p.pad()
		b.tail = next
		p = b.pages[next]
		p.reset()
	}
	length += extend()
	if len(p.entries) == 0 {
		p.ts = e.ts
	}
	e.length = uint16(length)
	p.entries = append(p.entries, *e)
	p.write += length
	p.commit += length
	b.entries++
	b.writeStamp = e.ts
	return true
}

// count is rb_num_of_entries: the entries in the buffer; b.mu is held.
func (b *cpuBuffer) count() uint64 { return b.entries - b.overrun - b.read }

// bytes is ring_buffer_bytes_cpu (entries_bytes - read_bytes): the
// bytes of the unread events and of the padding after them; b.mu is held.
func (b *cpuBuffer) bytes() int {
	n := 0
	for i := b.head; ; i = (i + 1) % len(b.pages) {
		p := b.pages[i]
		n += p.commit - p.readBytes
		if i == b.tail {
			return n
		}
	}
}

// oldestTS is ring_buffer_oldest_event_ts: the time stamp of the oldest
// page; b.mu is held.
func (b *cpuBuffer) oldestTS() uint64 { return b.pages[b.head].ts }

// each calls f for every unread entry, oldest first; b.mu is held.
func (b *cpuBuffer) each(f func(*traceEntry)) {
	for i := b.head; ; i = (i + 1) % len(b.pages) {
		p := b.pages[i]
		for j := p.read; j < len(p.entries); j++ {
			f(&p.entries[j])
		}
		if i == b.tail {
			return
		}
	}
}

// peek returns the oldest unread entry and its position in the CPU's
// stream (the events before it were read or overrun), or nil; b.mu is
// held.
func (b *cpuBuffer) peek() (*traceEntry, uint64) {
	for i := b.head; ; i = (i + 1) % len(b.pages) {
		p := b.pages[i]
		if p.read < len(p.entries) {
			return &p.entries[p.read], b.overrun + b.read
		}
		if i == b.tail {
			return nil, 0
		}
	}
}

// consume takes the oldest unread entry (rb_advance_reader); the
// overruns before it are reported now. b.mu is held and the buffer is
// not empty.
func (b *cpuBuffer) consume() {
	for {
		p := b.pages[b.head]
		if p.read < len(p.entries) {
			p.readBytes += int(p.entries[p.read].length)
			p.read++
			b.read++
			if p.read == len(p.entries) && b.head != b.tail {
				// Read to its end, the page rejoins the ring.
				p.reset()
				b.head = (b.head + 1) % len(b.pages)
			}
			b.lastOverrun = b.overrun
			return
		}
		// The head page was read to its end while it was also the
		// tail; the writer has moved on since: step over it.
		p.reset()
		b.head = (b.head + 1) % len(b.pages)
	}
}

// reset is ring_buffer_reset_cpu: empty, with its counters zeroed. The
// pages keep their time stamps, so that stats' oldest event ts goes on
// showing the head page's, as Linux's does after a reset.
func (b *cpuBuffer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.pages {
		ts := p.ts
		p.reset()
		p.ts = ts
	}
	b.tail = b.head
	b.writeStamp = 0
	b.entries, b.overrun, b.commitOverrun, b.dropped, b.read, b.lastOverrun = 0, 0, 0, 0, 0, 0
}

// resize is ring_buffer_resize for one CPU: new pages join after the
// newest; fewer pages drop the oldest, their entries counted as overrun
// (rb_remove_pages).
func (b *cpuBuffer) resize(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n == len(b.pages) {
		return
	}
	var used []*rbPage
	for i := b.head; ; i = (i + 1) % len(b.pages) {
		used = append(used, b.pages[i])
		if i == b.tail {
			break
		}
	}
	for len(used) > n {
		b.overrun += uint64(used[0].unread())
		used = used[1:]
	}
	pages := make([]*rbPage, n)
	copy(pages, used)
	for i := len(used); i < n; i++ {
		pages[i] = &rbPage{}
	}
	b.pages, b.head, b.tail = pages, 0, len(used)-1
}

// ringBuffer is a trace_buffer: the per-CPU buffers, and the readers
// waiting for them.
type ringBuffer struct {
	cpus      []*cpuBuffer
	overwrite atomic.Bool // RB_FL_OVERWRITE, the overwrite option

	waitMu  sync.Mutex
	wait    chan struct{} // closed when an event arrives; nil when no reader waits
	waiting atomic.Bool   // a reader waits: writers look at this alone
}

func newRingBuffer(ncpu int, size uint64) *ringBuffer {
	rb := &ringBuffer{}
	for i := 0; i < ncpu; i++ {
		rb.cpus = append(rb.cpus, newCPUBuffer(int(pagesFor(size))))
	}
	rb.overwrite.Store(true)
	return rb
}

// write records e on cpu; false if it was dropped. A waiting reader is
// woken (rb_wakeups).
func (rb *ringBuffer) write(cpu int, e *traceEntry, payload int) bool {
	if cpu < 0 || cpu >= len(rb.cpus) || rb.cpus[cpu].recordOff.Load() {
		return false
	}
	if !rb.cpus[cpu].write(e, payload, rb.overwrite.Load()) {
		return false
	}
	if rb.waiting.Load() {
		rb.waitMu.Lock()
		if rb.wait != nil {
			close(rb.wait)
			rb.wait = nil
		}
		rb.waiting.Store(false)
		rb.waitMu.Unlock()
	}
	return true
}

// waiter returns a channel closed at the next write. The caller checks
// the buffer again after taking it, so that a write between its check
// and this call is not missed: the write sees waiting set, or the check
// sees the write.
func (rb *ringBuffer) waiter() <-chan struct{} {
	rb.waitMu.Lock()
	defer rb.waitMu.Unlock()
	if rb.wait == nil {
		rb.wait = make(chan struct{})
	}
	rb.waiting.Store(true)
	return rb.wait
}

// reset is tracing_reset_online_cpus: every CPU's buffer emptied, its
// counters zeroed.
func (rb *ringBuffer) reset() {
	for _, b := range rb.cpus {
		b.reset()
	}
}

// empty reports whether cpu (or every CPU, for cpu < 0) has nothing
// unread.
func (rb *ringBuffer) empty(cpu int) bool {
	for i, b := range rb.cpus {
		if cpu >= 0 && i != cpu {
			continue
		}
		b.mu.Lock()
		n := b.count()
		b.mu.Unlock()
		if n > 0 {
			return false
		}
	}
	return true
}

// peekNext returns a copy of the unread entry with the smallest time
// stamp on cpu (or on any CPU, for cpu < 0; on a tie the lowest CPU's,
// as __find_next_entry), the CPU, its position in that CPU's stream and
// the events overruns took there since the last one read. ok is false
// when there is none.
func (rb *ringBuffer) peekNext(cpu int) (e traceEntry, from int, seq, lost uint64, ok bool) {
	from = -1
	for i, b := range rb.cpus {
		if cpu >= 0 && i != cpu {
			continue
		}
		b.mu.Lock()
		if pe, s := b.peek(); pe != nil && (from < 0 || pe.ts < e.ts) {
			e, from, seq, lost = *pe, i, s, b.overrun-b.lastOverrun
		}
		b.mu.Unlock()
	}
	return e, from, seq, lost, from >= 0
}

// consumeIf consumes the oldest unread entry of cpu if it still is the
// one at seq (what peekNext saw): another reader may have taken it, or
// the writer overrun it, since.
func (rb *ringBuffer) consumeIf(cpu int, seq uint64) bool {
	b := rb.cpus[cpu]
	b.mu.Lock()
	defer b.mu.Unlock()
	if pe, s := b.peek(); pe == nil || s != seq {
		return false
	}
	b.consume()
	return true
}

// snapshot copies the unread entries of cpu (every CPU for cpu < 0),
// merged by time stamp as the trace iterator shows them, with the CPU
// each came from.
func (rb *ringBuffer) snapshot(cpu int) ([]traceEntry, []int) {
	per := make([][]traceEntry, len(rb.cpus))
	total := 0
	for i, b := range rb.cpus {
		if cpu >= 0 && i != cpu {
			continue
		}
		b.mu.Lock()
		out := make([]traceEntry, 0, b.count())
		b.each(func(e *traceEntry) { out = append(out, *e) })
		b.mu.Unlock()
		per[i] = out
		total += len(out)
	}
	entries := make([]traceEntry, 0, total)
	cpus := make([]int, 0, total)
	idx := make([]int, len(per))
	for len(entries) < total {
		best := -1
		for i, es := range per {
			if idx[i] < len(es) && (best < 0 || es[idx[i]].ts < per[best][idx[best]].ts) {
				best = i
			}
		}
		entries = append(entries, per[best][idx[best]])
		cpus = append(cpus, best)
		idx[best]++
	}
	return entries, cpus
}

// totals is get_total_entries: the entries in the buffer and the entries
// written (those plus the ones overrun), over every CPU.
func (rb *ringBuffer) totals() (entries, written uint64) {
	for _, b := range rb.cpus {
		b.mu.Lock()
		n := b.count()
		entries += n
		written += n + b.overrun
		b.mu.Unlock()
	}
	return entries, written
}

// overruns is ring_buffer_overruns: every CPU's overrun.
func (rb *ringBuffer) overruns() uint64 {
	var n uint64
	for _, b := range rb.cpus {
		b.mu.Lock()
		n += b.overrun
		b.mu.Unlock()
	}
	return n
}
