package tracing

import (
	"bytes"
	"fmt"
)

// The kmem events of the guest's slab (mm/slab.c), after Linux 6.1's
// include/trace/events/kmem.h: kmalloc (every kmalloc and kzalloc, the
// large ones too, with node NUMA_NO_NODE) and kfree (NULL included).
// The other kmem events (kmem_cache_alloc, mm_page_alloc, ...) are not
// in the guest.

// gfpFlagNames are show_gfp_flags' {mask, name} pairs in the reference
// kernel's order, its print fmt's values evaluated.
var gfpFlagNames = []flagName{
	{0x1c24ca, "GFP_TRANSHUGE"}, {0x1c20ca, "GFP_TRANSHUGE_LIGHT"}, {0x100cca, "GFP_HIGHUSER_MOVABLE"},
	{0x100cc2, "GFP_HIGHUSER"}, {0x100cc0, "GFP_USER"}, {0x400cc0, "GFP_KERNEL_ACCOUNT"},
	{0xcc0, "GFP_KERNEL"}, {0xc40, "GFP_NOFS"}, {0xa20, "GFP_ATOMIC"}, {0xc00, "GFP_NOIO"},
	{0x800, "GFP_NOWAIT"}, {0x1, "GFP_DMA"}, {0x2, "__GFP_HIGHMEM"}, {0x4, "GFP_DMA32"},
	{0x20, "__GFP_HIGH"}, {0x200, "__GFP_ATOMIC"}, {0x40, "__GFP_IO"}, {0x80, "__GFP_FS"},
	{0x2000, "__GFP_NOWARN"}, {0x4000, "__GFP_RETRY_MAYFAIL"}, {0x8000, "__GFP_NOFAIL"},
	{0x10000, "__GFP_NORETRY"}, {0x40000, "__GFP_COMP"}, {0x100, "__GFP_ZERO"},
	{0x80000, "__GFP_NOMEMALLOC"}, {0x20000, "__GFP_MEMALLOC"}, {0x100000, "__GFP_HARDWALL"},
	{0x200000, "__GFP_THISNODE"}, {0x10, "__GFP_RECLAIMABLE"}, {0x8, "__GFP_MOVABLE"},
	{0x400000, "__GFP_ACCOUNT"}, {0x1000, "__GFP_WRITE"}, {0xc00, "__GFP_RECLAIM"},
	{0x400, "__GFP_DIRECT_RECLAIM"}, {0x800, "__GFP_KSWAPD_RECLAIM"}, {0x800000, "__GFP_ZEROTAGS"},
}

const gfpAccount = 0x400000 // __GFP_ACCOUNT

// kmallocFmt is kmalloc's print fmt as the reference kernel's format file
// shows it, show_gfp_flags expanded.
const kmallocFmt = `"call_site=%pS ptr=%p bytes_req=%zu bytes_alloc=%zu gfp_flags=%s node=%d accounted=%s", (void *)REC->call_site, REC->ptr, REC->bytes_req, REC->bytes_alloc, (REC->gfp_flags) ? __print_flags(REC->gfp_flags, "|", {( unsigned long)(((((((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u) | (( gfp_t)0x100000u)) | (( gfp_t)0x02u)) | (( gfp_t)0x08u) | (( gfp_t)0) | (( gfp_t)0)) | (( gfp_t)0x40000u) | (( gfp_t)0x80000u) | (( gfp_t)0x2000u)) & ~(( gfp_t)(0x400u|0x800u))) | (( gfp_t)0x400u)), "GFP_TRANSHUGE"}, {( unsigned long)((((((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u) | (( gfp_t)0x100000u)) | (( gfp_t)0x02u)) | (( gfp_t)0x08u) | (( gfp_t)0) | (( gfp_t)0)) | (( gfp_t)0x40000u) | (( gfp_t)0x80000u) | (( gfp_t)0x2000u)) & ~(( gfp_t)(0x400u|0x800u))), "GFP_TRANSHUGE_LIGHT"}, {( unsigned long)((((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u) | (( gfp_t)0x100000u)) | (( gfp_t)0x02u)) | (( gfp_t)0x08u) | (( gfp_t)0) | (( gfp_t)0)), "GFP_HIGHUSER_MOVABLE"}, {( unsigned long)(((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u) | (( gfp_t)0x100000u)) | (( gfp_t)0x02u)), "GFP_HIGHUSER"}, {( unsigned long)((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u) | (( gfp_t)0x100000u)), "GFP_USER"}, {( unsigned long)(((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u)) | (( gfp_t)0x400000u)), "GFP_KERNEL_ACCOUNT"}, {( unsigned long)((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u)), "GFP_KERNEL"}, {( unsigned long)((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u)), "GFP_NOFS"}, {( unsigned long)((( gfp_t)0x20u)|(( gfp_t)0x200u)|(( gfp_t)0x800u)), "GFP_ATOMIC"}, {( unsigned long)((( gfp_t)(0x400u|0x800u))), "GFP_NOIO"}, {( unsigned long)((( gfp_t)0x800u)), "GFP_NOWAIT"}, {( unsigned long)(( gfp_t)0x01u), "GFP_DMA"}, {( unsigned long)(( gfp_t)0x02u), "__GFP_HIGHMEM"}, {( unsigned long)(( gfp_t)0x04u), "GFP_DMA32"}, {( unsigned long)(( gfp_t)0x20u), "__GFP_HIGH"}, {( unsigned long)(( gfp_t)0x200u), "__GFP_ATOMIC"}, {( unsigned long)(( gfp_t)0x40u), "__GFP_IO"}, {( unsigned long)(( gfp_t)0x80u), "__GFP_FS"}, {( unsigned long)(( gfp_t)0x2000u), "__GFP_NOWARN"}, {( unsigned long)(( gfp_t)0x4000u), "__GFP_RETRY_MAYFAIL"}, {( unsigned long)(( gfp_t)0x8000u), "__GFP_NOFAIL"}, {( unsigned long)(( gfp_t)0x10000u), "__GFP_NORETRY"}, {( unsigned long)(( gfp_t)0x40000u), "__GFP_COMP"}, {( unsigned long)(( gfp_t)0x100u), "__GFP_ZERO"}, {( unsigned long)(( gfp_t)0x80000u), "__GFP_NOMEMALLOC"}, {( unsigned long)(( gfp_t)0x20000u), "__GFP_MEMALLOC"}, {( unsigned long)(( gfp_t)0x100000u), "__GFP_HARDWALL"}, {( unsigned long)(( gfp_t)0x200000u), "__GFP_THISNODE"}, {( unsigned long)(( gfp_t)0x10u), "__GFP_RECLAIMABLE"}, {( unsigned long)(( gfp_t)0x08u), "__GFP_MOVABLE"}, {( unsigned long)(( gfp_t)0x400000u), "__GFP_ACCOUNT"}, {( unsigned long)(( gfp_t)0x1000u), "__GFP_WRITE"}, {( unsigned long)(( gfp_t)(0x400u|0x800u)), "__GFP_RECLAIM"}, {( unsigned long)(( gfp_t)0x400u), "__GFP_DIRECT_RECLAIM"}, {( unsigned long)(( gfp_t)0x800u), "__GFP_KSWAPD_RECLAIM"}, {( unsigned long)(( gfp_t)0x800000u), "__GFP_ZEROTAGS"} ) : "none", REC->node, (1 && (REC->gfp_flags & ( unsigned long)(( gfp_t)0x400000u))) ? "true" : "false"`

// kmemEventDefs are kmem:kfree and kmem:kmalloc. sym formats a %pS.
func kmemEventDefs(sym func(uint64) string) []*staticEvent {
	return []*staticEvent{
		{group: "kmem", name: "kfree", id: 476, size: 24,
			fields:   []tpField{ulongField("call_site", 8), {"const void *", "ptr", 16, 8, false, false, false}},
			printFmt: `"call_site=%pS ptr=%p", (void *)REC->call_site, REC->ptr`,
			printFlags: func(w *bytes.Buffer, r record, flags uint32) {
				fmt.Fprintf(w, "call_site=%s ptr=%s", sym(r.u64(8)), printPtr(r.u64(16), flags&optHashPtr != 0))
			}, other: noOther},
		{group: "kmem", name: "kmalloc", id: 477, size: 56,
			fields: []tpField{ulongField("call_site", 8), {"const void *", "ptr", 16, 8, false, false, false},
				{"size_t", "bytes_req", 24, 8, false, false, false}, {"size_t", "bytes_alloc", 32, 8, false, false, false},
				ulongField("gfp_flags", 40), intField("node", 48)},
			printFmt: kmallocFmt,
			printFlags: func(w *bytes.Buffer, r record, flags uint32) {
				gfp := r.u64(40)
				fmt.Fprintf(w, "call_site=%s ptr=%s bytes_req=%d bytes_alloc=%d gfp_flags=", sym(r.u64(8)), printPtr(r.u64(16), flags&optHashPtr != 0), r.u64(24), r.u64(32))
				if gfp != 0 {
					printFlags(w, gfp, "|", gfpFlagNames)
				} else {
					w.WriteString("none")
				}
				accounted := "false"
				if gfp&gfpAccount != 0 {
					accounted = "true"
				}
				fmt.Fprintf(w, " node=%d accounted=%s", r.i32(48), accounted)
			}, other: noOther},
	}
}

// printPtr is a %p of an event's print fmt: hashed, or with hash-ptr
// off %px, the pointer in 16 hex digits (trace_event_format turns the
// format's %p into %px).
func printPtr(p uint64, hash bool) string {
	if hash {
		return hashedPtr(p)
	}
	return fmt.Sprintf("%016x", p)
}

// hashedPtr is %p as Linux prints it with hash-ptr set: NULL as zeros,
// else a 32-bit hash of the pointer in 16 hex digits (ptr_to_id). Linux
// keys its siphash with a random boot key; kpemu's hash is fixed, so the
// same pointer prints the same in every run.
func hashedPtr(p uint64) string {
	if p == 0 {
		return "0000000000000000"
	}
	// splitmix64's finaliser: every bit of p reaches the 32 kept
	p ^= p >> 30
	p *= 0xbf58476d1ce4e5b9
	p ^= p >> 27
	p *= 0x94d049bb133111eb
	p ^= p >> 31
	return fmt.Sprintf("%016x", p&0xffffffff)
}
