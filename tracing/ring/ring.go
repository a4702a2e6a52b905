// Package ring is the per-CPU ring buffer behind the tracing tree's
// trace, trace_pipe, per_cpu/cpuN/ and snapshot files, after Linux 6.1's
// kernel/trace/ring_buffer.c: one buffer per CPU, each a ring of pages
// that the CPU's events fill in order, so that buffer_size_kb, stats and
// the overrun counts mean what they mean on Linux. It holds entries of
// any type E and knows nothing of what they record: the caller gives
// each entry's payload size and how to read its time stamp.
//
// What is Linux's here: the page size (BUF_PAGE_SIZE, a 4 KiB page less
// its 16-byte header), the pages a size in bytes becomes (at least two),
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
// What is simpler: there is no separate reader page. Linux's consuming
// reader swaps the oldest page out of the ring, which keeps up to one
// page more while a reader is active; here the reader consumes entries
// in place and a page returns to the ring when it is read to its end.
// Events from interrupts that nest inside a write cannot happen (a vCPU
// records one event at a time), so commit overrun stays 0.
package ring

import (
	"sync"
	"sync/atomic"
)

// Sizes from ring_buffer.c (64-bit, 4 KiB pages).
const (
	// PageSize is BUF_PAGE_SIZE: PAGE_SIZE less the time stamp and
	// commit of buffer_data_page.
	PageSize = 4096 - 16
	// MaxDataSize is BUF_MAX_DATA_SIZE: the largest payload.
	MaxDataSize = PageSize - 8

	rbEvntHdrSize   = 4      // RB_EVNT_HDR_SIZE: type_len:5, time_delta:27
	rbMaxSmallData  = 4 * 28 // RB_MAX_SMALL_DATA: larger payloads keep their length in array[0]
	rbLenTimeExtend = 8      // RB_LEN_TIME_EXTEND
	rbEvntMinSize   = 8      // RB_EVNT_MIN_SIZE: the smallest padding event
	tsDeltaLimit    = 1 << 27
	minBufferPages  = 2 // ring_buffer_resize: "we need a minimum of two pages"
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

// PagesFor is the number of pages ring_buffer_resize gives size bytes
// (DIV_ROUND_UP in unsigned long, which wraps as Go's uint64 does).
func PagesFor(size uint64) uint64 {
	return max((size+PageSize-1)/PageSize, minBufferPages)
}

// page is a buffer_page: the events of one page, in order.
type page[E any] struct {
	ts        uint64 // buffer_data_page.time_stamp: the first event's
	entries   []E
	meta      []slot // each entry's time stamp and length, beside it
	write     int    // bytes used: where the next event goes
	commit    int    // bytes entries_bytes counts: the events' and any padding event's
	read      int    // entries a consuming reader took
	readBytes int    // the bytes of those
}

// slot is what the buffer keeps of an entry besides the entry: its time
// stamp, read without a call to the caller's stamp function when the
// readers merge the CPUs, and the bytes it takes in its page.
type slot struct {
	ts     uint64
	length uint16
}

// reset empties p for reuse. The entries' array is kept, and what it
// still refers to is overwritten as the page fills again: at most a
// buffer's worth, not worth a clear per page.
func (p *page[E]) reset() {
	p.entries = p.entries[:0]
	p.meta = p.meta[:0]
	p.ts, p.write, p.commit, p.read, p.readBytes = 0, 0, 0, 0, 0
}

// pad is rb_reset_tail: the rest of the page is padding, which
// entries_bytes counts when a padding event fits there.
func (p *page[E]) pad() {
	if rest := PageSize - p.write; rest >= rbEvntMinSize {
		p.commit += rest
	}
	p.write = PageSize
}

// unread is the number of entries on p a consuming reader has not taken.
func (p *page[E]) unread() int { return len(p.entries) - p.read }

// CPU is a ring_buffer_per_cpu.
type CPU[E any] struct {
	mu sync.Mutex // the reader_lock and the writer's exclusion in one
	// recordOff is ring_buffer_record_disable_cpu. It stays with the
	// buffer through Swap.
	recordOff atomic.Bool
	state[E]
}

// state is everything of a CPU but its lock and its record switch: what
// Swap exchanges, as Linux swaps the buffers whole.
type state[E any] struct {
	pages []*page[E] // the ring; its length is the buffer's page count
	head  int        // the oldest page
	tail  int        // the page being written

	writeStamp uint64 // the last event's time stamp, for time extends

	// Linux's counters, zeroed by Reset: entries counts every event
	// committed, so the buffer holds entries - overrun - read of them.
	entries, overrun, commitOverrun, dropped, read uint64
	lastOverrun                                    uint64 // overrun at the last consuming read: what "[LOST n EVENTS]" reports
}

func newCPU[E any](pages int) *CPU[E] {
	b := &CPU[E]{}
	b.setPages(pages)
	return b
}

func (b *CPU[E]) setPages(n int) {
	b.pages = make([]*page[E], n)
	for i := range b.pages {
		b.pages[i] = &page[E]{}
	}
	b.head, b.tail = 0, 0
}

// SetRecording is ring_buffer_record_enable_cpu (on) and
// ring_buffer_record_disable_cpu: a CPU that does not record drops
// every write.
func (b *CPU[E]) SetRecording(on bool) { b.recordOff.Store(!on) }

// Pages is the buffer's page count.
func (b *CPU[E]) Pages() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pages)
}

// SizeBytes is the buffer's size as buffer_size_kb accounts it
// (data->entries: nr_pages * BUF_PAGE_SIZE).
func (b *CPU[E]) SizeBytes() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return uint64(len(b.pages)) * PageSize
}

// Stats are the counters per_cpu/cpuN/stats shows.
type Stats struct {
	Entries       uint64 // rb_num_of_entries: in the buffer, unread
	Overrun       uint64
	CommitOverrun uint64
	Bytes         int    // ring_buffer_bytes_cpu
	OldestTS      uint64 // ring_buffer_oldest_event_ts
	Dropped       uint64
	Read          uint64
}

// Stats reads the counters at one time.
func (b *CPU[E]) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Entries: b.count(), Overrun: b.overrun, CommitOverrun: b.commitOverrun, Bytes: b.bytes(),
		OldestTS: b.pages[b.head].ts, Dropped: b.dropped, Read: b.read}
}

// write is ring_buffer_lock_reserve and ring_buffer_unlock_commit for an
// event of payload bytes at time ts: it reports false when the event was
// not written (no room without overwrite, or too big), and left when the
// writer went on to a new page for it.
func (b *CPU[E]) write(e *E, ts uint64, payload int, overwrite bool) (ok, left bool) {
	if payload > MaxDataSize {
		return false, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	length := eventLength(payload)
	p := b.pages[b.tail]
	extend := func() int {
		// The first event of a page is stamped by the page.
		if p.write > 0 && ts >= b.writeStamp && ts-b.writeStamp >= tsDeltaLimit {
			return rbLenTimeExtend
		}
		return 0
	}
	if p.write+length+extend() > PageSize {
		// rb_move_tail: on to the next page, unless it is the oldest
		// and the buffer may not overwrite.
		next := (b.tail + 1) % len(b.pages)
		if next == b.head {
			if !overwrite {
				// Dropped; the page is padded all the same, once
				// (rb_move_tail's out_reset).
				b.dropped++
				p.pad()
				return false, false
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
		left = true
	}
	length += extend()
	if len(p.entries) == 0 {
		p.ts = ts
	}
	p.entries = append(p.entries, *e)
	p.meta = append(p.meta, slot{ts, uint16(length)})
	p.write += length
	p.commit += length
	b.entries++
	b.writeStamp = ts
	return true, left
}

// count is rb_num_of_entries: the entries in the buffer; b.mu is held.
func (b *CPU[E]) count() uint64 { return b.entries - b.overrun - b.read }

// bytes is ring_buffer_bytes_cpu (entries_bytes - read_bytes): the
// bytes of the unread events and of the padding after them; b.mu is held.
func (b *CPU[E]) bytes() int {
	n := 0
	for i := b.head; ; i = (i + 1) % len(b.pages) {
		p := b.pages[i]
		n += p.commit - p.readBytes
		if i == b.tail {
			return n
		}
	}
}

// peek returns the oldest unread entry, its time stamp and its position
// in the CPU's stream (the events before it were read or overrun), or
// nil; b.mu is held.
func (b *CPU[E]) peek() (*E, uint64, uint64) {
	for i := b.head; ; i = (i + 1) % len(b.pages) {
		p := b.pages[i]
		if p.read < len(p.entries) {
			return &p.entries[p.read], p.meta[p.read].ts, b.overrun + b.read
		}
		if i == b.tail {
			return nil, 0, 0
		}
	}
}

// consume takes the oldest unread entry (rb_advance_reader); the
// overruns before it are reported now. b.mu is held and the buffer is
// not empty.
func (b *CPU[E]) consume() {
	for {
		p := b.pages[b.head]
		if p.read < len(p.entries) {
			p.readBytes += int(p.meta[p.read].length)
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

// Reset is ring_buffer_reset_cpu: empty, with its counters zeroed. The
// pages keep their time stamps, so that stats' oldest event ts goes on
// showing the head page's, as Linux's does after a reset.
func (b *CPU[E]) Reset() {
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

// Resize is ring_buffer_resize for one CPU: new pages join after the
// newest; fewer pages drop the oldest, their entries counted as overrun
// (rb_remove_pages).
func (b *CPU[E]) Resize(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n == len(b.pages) {
		return
	}
	var used []*page[E]
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
	pages := make([]*page[E], n)
	copy(pages, used)
	for i := len(used); i < n; i++ {
		pages[i] = &page[E]{}
	}
	b.pages, b.head, b.tail = pages, 0, len(used)-1
}

// Buffer is a trace_buffer: the per-CPU buffers, and the readers
// waiting for them.
type Buffer[E any] struct {
	cpus      []*CPU[E]
	overwrite atomic.Bool // RB_FL_OVERWRITE, the overwrite option

	events waiters // woken at every event
	// The readers waiting for a watermark (full_waiters): woken when a
	// writer leaves a page, the only time a watermark can be hit.
	full waiters
}

// waiters are readers waiting on a channel that a writer closes.
type waiters struct {
	mu      sync.Mutex
	ch      chan struct{} // nil when no reader waits
	waiting atomic.Bool   // a reader waits: writers look at this alone
}

// get returns the channel the next wake closes. The caller checks the
// buffer again after taking it, so that a write between its check and
// this call is not missed: the write sees waiting set, or the check sees
// the write.
func (w *waiters) get() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	w.waiting.Store(true)
	return w.ch
}

func (w *waiters) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
	w.waiting.Store(false)
}

// New makes a buffer of ncpu CPUs of size bytes each (PagesFor), in
// overwrite mode.
func New[E any](ncpu int, size uint64) *Buffer[E] {
	rb := &Buffer[E]{}
	for i := 0; i < ncpu; i++ {
		rb.cpus = append(rb.cpus, newCPU[E](int(PagesFor(size))))
	}
	rb.overwrite.Store(true)
	return rb
}

// NumCPUs is the number of per-CPU buffers.
func (rb *Buffer[E]) NumCPUs() int { return len(rb.cpus) }

// CPU is cpu's buffer.
func (rb *Buffer[E]) CPU(cpu int) *CPU[E] { return rb.cpus[cpu] }

// SetOverwrite is ring_buffer_change_overwrite: when full, a writer
// overwrites the oldest page (on) or drops its own event.
func (rb *Buffer[E]) SetOverwrite(on bool) { rb.overwrite.Store(on) }

// Write records e on cpu as an event of payload bytes, time stamp ts
// (which orders the entries across CPUs and decides the time extends);
// false if it was dropped. A waiting reader is woken (rb_wakeups).
// (The stamp is an argument, not read through a function of the
// caller's: a call through a function value made every entry escape
// to the heap, an allocation at every hit of an event.)
func (rb *Buffer[E]) Write(cpu int, e *E, ts uint64, payload int) bool {
	if cpu < 0 || cpu >= len(rb.cpus) || rb.cpus[cpu].recordOff.Load() {
		return false
	}
	ok, left := rb.cpus[cpu].write(e, ts, payload, rb.overwrite.Load())
	if !ok {
		return false
	}
	if rb.events.waiting.Load() {
		rb.events.wake()
	}
	if left && rb.full.waiting.Load() {
		rb.full.wake()
	}
	return true
}

// FullWaiter returns a channel closed when a writer next leaves a page
// (or at WakeAll), for a reader waiting for a watermark (WatermarkHit).
// As with Waiter, the caller checks again after taking it.
func (rb *Buffer[E]) FullWaiter() <-chan struct{} { return rb.full.get() }

// WatermarkHit is rb_watermark_hit for one CPU: it has unread events
// and, for a watermark full (buffer_percent) above 0, the oldest of them
// are not on the writer's page and the pages the writer has left, one
// more, make full percent of the buffer (full_hit).
func (b *CPU[E]) WatermarkHit(full int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.count() == 0 {
		return false
	}
	if full == 0 {
		return true
	}
	// The unread pages before the writer's: ring_buffer_nr_dirty_pages.
	dirty := 0
	for i := b.head; i != b.tail; i = (i + 1) % len(b.pages) {
		if q := b.pages[i]; q.read < len(q.entries) || dirty > 0 {
			dirty++
		}
	}
	if dirty == 0 {
		return false // the oldest unread events are on the writer's page
	}
	return (dirty+1)*100 >= full*len(b.pages)
}

// Waiter returns a channel closed at the next write. The caller checks
// the buffer again after taking it, so that a write between its check
// and this call is not missed: the write sees waiting set, or the check
// sees the write.
func (rb *Buffer[E]) Waiter() <-chan struct{} { return rb.events.get() }

// Wake is ring_buffer_wake_waiters: the readers waiting for an event
// look at the buffer again.
func (rb *Buffer[E]) Wake() { rb.events.wake() }

// Waiting reports whether a reader waits, for an event or a watermark.
func (rb *Buffer[E]) Waiting() bool { return rb.events.waiting.Load() || rb.full.waiting.Load() }

// WakeAll is ring_buffer_wake_waiters: every reader waiting, for an
// event or for a watermark, looks at the buffer again.
func (rb *Buffer[E]) WakeAll() {
	rb.events.wake()
	rb.full.wake()
}

// Reset is tracing_reset_online_cpus: every CPU's buffer emptied, its
// counters zeroed.
func (rb *Buffer[E]) Reset() {
	for _, b := range rb.cpus {
		b.Reset()
	}
}

// Swap exchanges the contents of rb and other CPU by CPU, each pair
// under both locks (update_max_tr's ring_buffer swap). The buffers
// themselves stay, so that writers holding rb never see it change, and
// each CPU keeps its record switch. Both have the same number of CPUs.
func (rb *Buffer[E]) Swap(other *Buffer[E]) {
	for i, live := range rb.cpus {
		spare := other.cpus[i]
		live.mu.Lock()
		spare.mu.Lock()
		live.state, spare.state = spare.state, live.state
		spare.mu.Unlock()
		live.mu.Unlock()
	}
}

// Empty reports whether cpu (or every CPU, for cpu < 0) has nothing
// unread.
func (rb *Buffer[E]) Empty(cpu int) bool {
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

// PeekNext returns a copy of the unread entry with the smallest time
// stamp on cpu (or on any CPU, for cpu < 0; on a tie the lowest CPU's,
// as __find_next_entry), the CPU, its position in that CPU's stream and
// the events overruns took there since the last one read. ok is false
// when there is none.
func (rb *Buffer[E]) PeekNext(cpu int) (e E, from int, seq, lost uint64, ok bool) {
	from = -1
	var ets uint64
	for i, b := range rb.cpus {
		if cpu >= 0 && i != cpu {
			continue
		}
		b.mu.Lock()
		if pe, ts, s := b.peek(); pe != nil && (from < 0 || ts < ets) {
			e, ets, from, seq, lost = *pe, ts, i, s, b.overrun-b.lastOverrun
		}
		b.mu.Unlock()
	}
	return e, from, seq, lost, from >= 0
}

// ConsumeIf consumes the oldest unread entry of cpu if it still is the
// one at seq (what PeekNext saw): another reader may have taken it, or
// the writer overrun it, since.
func (rb *Buffer[E]) ConsumeIf(cpu int, seq uint64) bool {
	b := rb.cpus[cpu]
	b.mu.Lock()
	defer b.mu.Unlock()
	if pe, _, s := b.peek(); pe == nil || s != seq {
		return false
	}
	b.consume()
	return true
}

// Snapshot copies the unread entries of cpu (every CPU for cpu < 0),
// merged by time stamp as the trace iterator shows them, with the CPU
// each came from.
func (rb *Buffer[E]) Snapshot(cpu int) ([]E, []int) {
	per := make([][]E, len(rb.cpus))
	stamps := make([][]uint64, len(rb.cpus))
	total := 0
	for i, b := range rb.cpus {
		if cpu >= 0 && i != cpu {
			continue
		}
		b.mu.Lock()
		n := b.count()
		out, ts := make([]E, 0, n), make([]uint64, 0, n)
		for j := b.head; ; j = (j + 1) % len(b.pages) {
			p := b.pages[j]
			out = append(out, p.entries[p.read:]...)
			for _, m := range p.meta[p.read:] {
				ts = append(ts, m.ts)
			}
			if j == b.tail {
				break
			}
		}
		b.mu.Unlock()
		per[i], stamps[i] = out, ts
		total += len(out)
	}
	entries := make([]E, 0, total)
	cpus := make([]int, 0, total)
	idx := make([]int, len(per))
	for len(entries) < total {
		best := -1
		var bestTS uint64
		for i, es := range per {
			if idx[i] >= len(es) {
				continue
			}
			if ts := stamps[i][idx[i]]; best < 0 || ts < bestTS {
				best, bestTS = i, ts
			}
		}
		entries = append(entries, per[best][idx[best]])
		cpus = append(cpus, best)
		idx[best]++
	}
	return entries, cpus
}

// Totals is get_total_entries: the entries in the buffer and the entries
// written (those plus the ones overrun), over every CPU.
func (rb *Buffer[E]) Totals() (entries, written uint64) {
	for _, b := range rb.cpus {
		b.mu.Lock()
		n := b.count()
		entries += n
		written += n + b.overrun
		b.mu.Unlock()
	}
	return entries, written
}

// Overruns is ring_buffer_overruns: every CPU's overrun.
func (rb *Buffer[E]) Overruns() uint64 {
	var n uint64
	for _, b := range rb.cpus {
		b.mu.Lock()
		n += b.overrun
		b.mu.Unlock()
	}
	return n
}

// PeekAfter returns a copy of cpu's unread entry that follows the one at
// seq, while that one is still the oldest unread (what PeekNext saw):
// ring_buffer_peek after a consume, without the consume, so that a
// reader that looks ahead (the graph tracer's leaf test) takes both or
// neither.
func (rb *Buffer[E]) PeekAfter(cpu int, seq uint64) (e E, ok bool) {
	b := rb.cpus[cpu]
	b.mu.Lock()
	defer b.mu.Unlock()
	if pe, _, s := b.peek(); pe == nil || s != seq {
		return e, false
	}
	first := true
	for i := b.head; ; i = (i + 1) % len(b.pages) {
		p := b.pages[i]
		for j := p.read; j < len(p.entries); j++ {
			if !first {
				return p.entries[j], true
			}
			first = false
		}
		if i == b.tail {
			return e, false
		}
	}
}
