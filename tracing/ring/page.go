package ring

import "encoding/binary"

// The binary interface: per_cpu/cpuN/trace_pipe_raw's pages, after
// ring_buffer_read_page. A page is a buffer_data_page, the layout
// events/header_page prints: the u64 time stamp of its first event, the
// local_t commit (the bytes of events after the header, with
// RB_MISSED_EVENTS and RB_MISSED_STORED in its high bits), then the
// events, each in struct ring_buffer_event's encoding (header_event):
// a u32 of type_len:5 and time_delta:27, then the payload (a
// type_len of 0 keeps the length in array[0]), a time extend (type_len
// 30) before an event whose delta does not fit 27 bits.
//
// kpemu keeps entries as Go values, not bytes (ring.go), so a page is
// made when it is read: its events are those of the oldest page of the
// ring, each encoded by the caller to its record's bytes, with their
// time stamps. The deltas are the differences of those stamps; the
// first event of a page is stamped by the page (delta 0), and a read
// that takes the rest of a page another read began stamps its page with
// the last event read before and keeps the next one's delta, as Linux's
// ring_buffer_read_page does with the reader's read_stamp.

// Bits Linux sets in a read page's commit.
const (
	MissedEvents = 1 << 31 // RB_MISSED_EVENTS: events were lost before this page
	MissedStored = 1 << 30 // RB_MISSED_STORED: their count is stored after the data
)

// Type codes of ring_buffer_event.type_len.
const (
	typePadding    = 29 // RINGBUF_TYPE_PADDING
	typeTimeExtend = 30 // RINGBUF_TYPE_TIME_EXTEND
	typeTimeStamp  = 31 // RINGBUF_TYPE_TIME_STAMP
	typeDataMax    = 28 // RINGBUF_TYPE_DATA_TYPE_LEN_MAX
	// PageHeaderSize is BUF_PAGE_HDR_SIZE: time stamp and commit.
	PageHeaderSize = 16
	// FullPage is a whole buffer_data_page, what one read returns.
	FullPage = PageSize + PageHeaderSize
)

// Encoder appends the record of e (struct trace_entry and the event's
// fields) to out, exactly the payload bytes the writer accounted.
type Encoder[E any] func(e *E, out []byte) []byte

// appendEvent appends the event header (and a time extend when delta
// needs one) and the record rec.
func appendEvent(out []byte, delta uint64, rec []byte) []byte {
	if delta >= tsDeltaLimit {
		out = binary.LittleEndian.AppendUint32(out, typeTimeExtend|uint32(delta&(tsDeltaLimit-1))<<5)
		out = binary.LittleEndian.AppendUint32(out, uint32(delta>>27))
		delta = 0
	}
	n := len(rec)
	length := eventLength(n) // the header included
	if n == 0 {
		n = 1
	}
	if n > rbMaxSmallData {
		out = binary.LittleEndian.AppendUint32(out, uint32(delta)<<5)
		out = binary.LittleEndian.AppendUint32(out, uint32(length-rbEvntHdrSize))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32((length-rbEvntHdrSize)/4)|uint32(delta)<<5)
	}
	start := len(out)
	out = append(out, rec...)
	// The rest of the event's aligned length is zero.
	end := start + length - rbEvntHdrSize
	if n > rbMaxSmallData {
		end -= 4
	}
	for len(out) < end {
		out = append(out, 0)
	}
	return out
}

// eventBytes is the length appendEvent gives an event of n payload bytes
// after one at delta: the event and its time extend.
func eventBytes(n int, delta uint64) int {
	l := eventLength(n)
	if delta >= tsDeltaLimit {
		l += rbLenTimeExtend
	}
	return l
}

// ReadPage is ring_buffer_read_page for a reader that wants at most
// size bytes (a page and its header at most): it takes the unread
// events of the CPU's oldest page that fit, in order, consumes them,
// and appends their page to dst, zero-filled to FullPage bytes. The
// page's commit carries RB_MISSED_EVENTS (and, with their count after
// the data, RB_MISSED_STORED) when overruns took events since the last
// read. ok is false, and nothing is consumed, when there is nothing to
// read or size cannot hold the header (Linux's -1).
func (b *CPU[E]) ReadPage(dst []byte, size int, enc Encoder[E]) (out []byte, ok bool) {
	return b.readPage(dst, size, enc, false)
}

// ReadFullPage is ReadPage with ring_buffer_read_page's full set, as a
// splice of trace_pipe_raw reads: a whole page, and nothing while the
// oldest unread events are on the page the writer is filling.
func (b *CPU[E]) ReadFullPage(dst []byte, enc Encoder[E]) (out []byte, ok bool) {
	return b.readPage(dst, FullPage, enc, true)
}

func (b *CPU[E]) readPage(dst []byte, size int, enc Encoder[E], full bool) (out []byte, ok bool) {
	if size <= PageHeaderSize {
		return dst, false
	}
	size = min(size, FullPage) - PageHeaderSize
	b.mu.Lock()
	defer b.mu.Unlock()
	// The oldest page with unread events.
	var p *page[E]
	for i := b.head; ; i = (i + 1) % len(b.pages) {
		if q := b.pages[i]; q.read < len(q.entries) {
			if full && i == b.tail {
				return dst, false // the writer's page: not full yet
			}
			p = q
			break
		}
		if i == b.tail {
			return dst, false
		}
	}
	missed := b.overrun - b.lastOverrun
	base := len(dst)
	// The page's time stamp: its first event's, or, when a read took
	// events of it before, the last of those's (Linux's read_stamp),
	// from which the next event keeps its delta.
	prev := p.meta[p.read].ts
	if p.read > 0 {
		prev = p.meta[p.read-1].ts
	}
	dst = binary.LittleEndian.AppendUint64(dst, prev)
	dst = binary.LittleEndian.AppendUint64(dst, 0) // the commit, below
	var rec []byte
	taken := 0
	for p.read < len(p.entries) {
		ts := p.meta[p.read].ts
		delta := uint64(0)
		if ts > prev {
			delta = ts - prev
		}
		rec = enc(&p.entries[p.read], rec[:0])
		if len(dst)-base-PageHeaderSize+eventBytes(len(rec), delta) > size {
			if taken > 0 || eventBytes(len(rec), 0) <= PageSize {
				break
			}
			// A record no page can hold (its encoder broke the
			// payload it accounted): dropped, or no read would
			// ever get past it.
			last := p.read+1 == len(p.entries)
			b.consume()
			if last {
				break
			}
			continue
		}
		dst = appendEvent(dst, delta, rec)
		prev = ts
		taken++
		// consume may move head on when p is read to its end: p is
		// the page at head or one it steps to.
		last := p.read+1 == len(p.entries)
		b.consume()
		if last {
			break
		}
	}
	if taken == 0 {
		return dst[:base], false
	}
	commit := uint64(len(dst) - base - PageHeaderSize)
	if missed > 0 {
		if PageSize-int(commit) >= 8 {
			dst = binary.LittleEndian.AppendUint64(dst, missed)
			commit |= MissedStored
		}
		commit |= MissedEvents
	}
	binary.LittleEndian.PutUint64(dst[base+8:], commit)
	for len(dst)-base < FullPage {
		dst = append(dst, 0)
	}
	return dst, true
}
