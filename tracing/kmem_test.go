package tracing_test

import (
	"regexp"
	"testing"
)

// The reference kernel's kmem format files, byte for byte.
const (
	wantKmallocFormat = "name: kmalloc\nID: 477\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:size_t bytes_req;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:size_t bytes_alloc;\toffset:32;\tsize:8;\tsigned:0;\n\tfield:unsigned long gfp_flags;\toffset:40;\tsize:8;\tsigned:0;\n\tfield:int node;\toffset:48;\tsize:4;\tsigned:1;\n\nprint fmt: \"call_site=%pS ptr=%p bytes_req=%zu bytes_alloc=%zu gfp_flags=%s node=%d accounted=%s\", (void *)REC->call_site, REC->ptr, REC->bytes_req, REC->bytes_alloc, (REC->gfp_flags) ? __print_flags(REC->gfp_flags, \"|\", {( unsigned long)(((((((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u) | (( gfp_t)0x100000u)) | (( gfp_t)0x02u)) | (( gfp_t)0x08u) | (( gfp_t)0) | (( gfp_t)0)) | (( gfp_t)0x40000u) | (( gfp_t)0x80000u) | (( gfp_t)0x2000u)) & ~(( gfp_t)(0x400u|0x800u))) | (( gfp_t)0x400u)), \"GFP_TRANSHUGE\"}, {( unsigned long)((((((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u) | (( gfp_t)0x100000u)) | (( gfp_t)0x02u)) | (( gfp_t)0x08u) | (( gfp_t)0) | (( gfp_t)0)) | (( gfp_t)0x40000u) | (( gfp_t)0x80000u) | (( gfp_t)0x2000u)) & ~(( gfp_t)(0x400u|0x800u))), \"GFP_TRANSHUGE_LIGHT\"}, {( unsigned long)((((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u) | (( gfp_t)0x100000u)) | (( gfp_t)0x02u)) | (( gfp_t)0x08u) | (( gfp_t)0) | (( gfp_t)0)), \"GFP_HIGHUSER_MOVABLE\"}, {( unsigned long)(((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u) | (( gfp_t)0x100000u)) | (( gfp_t)0x02u)), \"GFP_HIGHUSER\"}, {( unsigned long)((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u) | (( gfp_t)0x100000u)), \"GFP_USER\"}, {( unsigned long)(((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u)) | (( gfp_t)0x400000u)), \"GFP_KERNEL_ACCOUNT\"}, {( unsigned long)((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u)), \"GFP_KERNEL\"}, {( unsigned long)((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u)), \"GFP_NOFS\"}, {( unsigned long)((( gfp_t)0x20u)|(( gfp_t)0x200u)|(( gfp_t)0x800u)), \"GFP_ATOMIC\"}, {( unsigned long)((( gfp_t)(0x400u|0x800u))), \"GFP_NOIO\"}, {( unsigned long)((( gfp_t)0x800u)), \"GFP_NOWAIT\"}, {( unsigned long)(( gfp_t)0x01u), \"GFP_DMA\"}, {( unsigned long)(( gfp_t)0x02u), \"__GFP_HIGHMEM\"}, {( unsigned long)(( gfp_t)0x04u), \"GFP_DMA32\"}, {( unsigned long)(( gfp_t)0x20u), \"__GFP_HIGH\"}, {( unsigned long)(( gfp_t)0x200u), \"__GFP_ATOMIC\"}, {( unsigned long)(( gfp_t)0x40u), \"__GFP_IO\"}, {( unsigned long)(( gfp_t)0x80u), \"__GFP_FS\"}, {( unsigned long)(( gfp_t)0x2000u), \"__GFP_NOWARN\"}, {( unsigned long)(( gfp_t)0x4000u), \"__GFP_RETRY_MAYFAIL\"}, {( unsigned long)(( gfp_t)0x8000u), \"__GFP_NOFAIL\"}, {( unsigned long)(( gfp_t)0x10000u), \"__GFP_NORETRY\"}, {( unsigned long)(( gfp_t)0x40000u), \"__GFP_COMP\"}, {( unsigned long)(( gfp_t)0x100u), \"__GFP_ZERO\"}, {( unsigned long)(( gfp_t)0x80000u), \"__GFP_NOMEMALLOC\"}, {( unsigned long)(( gfp_t)0x20000u), \"__GFP_MEMALLOC\"}, {( unsigned long)(( gfp_t)0x100000u), \"__GFP_HARDWALL\"}, {( unsigned long)(( gfp_t)0x200000u), \"__GFP_THISNODE\"}, {( unsigned long)(( gfp_t)0x10u), \"__GFP_RECLAIMABLE\"}, {( unsigned long)(( gfp_t)0x08u), \"__GFP_MOVABLE\"}, {( unsigned long)(( gfp_t)0x400000u), \"__GFP_ACCOUNT\"}, {( unsigned long)(( gfp_t)0x1000u), \"__GFP_WRITE\"}, {( unsigned long)(( gfp_t)(0x400u|0x800u)), \"__GFP_RECLAIM\"}, {( unsigned long)(( gfp_t)0x400u), \"__GFP_DIRECT_RECLAIM\"}, {( unsigned long)(( gfp_t)0x800u), \"__GFP_KSWAPD_RECLAIM\"}, {( unsigned long)(( gfp_t)0x800000u), \"__GFP_ZEROTAGS\"} ) : \"none\", REC->node, (1 && (REC->gfp_flags & ( unsigned long)(( gfp_t)0x400000u))) ? \"true\" : \"false\"\n"
	wantKfreeFormat   = "name: kfree\nID: 476\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n\nprint fmt: \"call_site=%pS ptr=%p\", (void *)REC->call_site, REC->ptr\n"
)

// kmem:kmalloc and kmem:kfree have Linux 6.1's formats and ids, and the
// guest's slab fires them: its kmallocs and kzallocs, with their callers,
// sizes and GFP flags as Linux prints them.
func TestKmemEvents(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, tc := range []struct{ file, want string }{
		{"tracing/events/kmem/kmalloc/format", wantKmallocFormat},
		{"tracing/events/kmem/kfree/format", wantKfreeFormat},
		{"tracing/events/kmem/kmalloc/id", "477\n"},
	} {
		if got := f.read(t, tc.file); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.file, got, tc.want)
		}
	}
	if err := f.write("tracing/events/kmem/enable", "1\n", false); err != nil {
		t.Fatal(err)
	}
	f.step(t, 60_000_000)
	trace := f.read(t, "tracing/trace")
	for _, re := range []string{
		`(?m): kmalloc: call_site=\w+\+0x[0-9a-f]+/0x[0-9a-f]+ ptr=[0-9a-f]{16} bytes_req=\d+ bytes_alloc=\d+ gfp_flags=GFP_KERNEL(\|__GFP_ZERO)? node=-1 accounted=false$`,
		`(?m): kfree: call_site=\w+\+0x[0-9a-f]+/0x[0-9a-f]+ ptr=[0-9a-f]{16}$`,
	} {
		if !regexp.MustCompile(re).MatchString(trace) {
			t.Errorf("trace has no line matching %s", re)
		}
	}
	if t.Failed() {
		t.Logf("trace:\n%s", trace[:min(len(trace), 3000)])
	}
}
