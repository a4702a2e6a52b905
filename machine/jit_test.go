package machine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// runWith runs the program as bootAndRun does and returns its UART output
// and the machine's counters.
func runWith(t *testing.T, path string, cfg Config, patch func(*Machine)) ([]byte, Stats) {
	t.Helper()
	m, out := bootAndRun(t, path, cfg, patch)
	return out, m.Stats()
}

// TestTranslationMatchesInterpreter runs the differential programs,
// CoreMark and random instruction sequences with block translation and
// with the interpreter alone, and requires the same output and the same
// number of instructions retired: translated code must be invisible,
// down to where slices end and interrupts are taken.
func TestTranslationMatchesInterpreter(t *testing.T) {
	type prog struct {
		name, path string
		cpus       int
		patch      func(*Machine)
	}
	var progs []prog
	for _, p := range diffProgs {
		progs = append(progs, prog{name: filepath.Base(p.path), path: p.path})
	}
	progs = append(progs, prog{name: "coremark", path: coremarkProg, patch: func(m *Machine) {
		var word [4]byte
		binary.LittleEndian.PutUint32(word[:], 20)
		if err := m.WriteMem(elfSymbol(t, coremarkProg, "iterations"), word[:]); err != nil {
			t.Fatal(err)
		}
	}})
	for gi, grp := range randGroups {
		for round := range 2 {
			path := filepath.Join(t.TempDir(), fmt.Sprintf("rand-%s-%d.elf", grp.name, round))
			patchRandProg(t, genSlots(gi, round+100, grp.gen), path)
			progs = append(progs, prog{name: fmt.Sprintf("rand-%s-%d", grp.name, round), path: path})
		}
	}
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{NumCPUs: max(p.cpus, 1), Interpret: true}
			want, wantSt := runWith(t, p.path, cfg, p.patch)
			cfg.Interpret = false
			got, gotSt := runWith(t, p.path, cfg, p.patch)
			// And with a code cache so small that it fills, empties and
			// fills again while blocks are chained.
			tiny, tinySt := runWith(t, p.path, cfg, func(m *Machine) {
				m.jits[0].shrink(4096, 8192)
				if p.patch != nil {
					p.patch(m)
				}
			})
			if tinySt.TranslatedBlocks > 100 && tinySt.CodeCacheFlushes == 0 {
				t.Errorf("%d blocks translated into an 8 KiB code cache, and it never filled", tinySt.TranslatedBlocks)
			}
			// And in parallel mode, whose translated code differs.
			cfg.Parallel = true
			par, parSt := runWith(t, p.path, cfg, p.patch)
			if parSt.TranslatedBlocks == 0 {
				t.Errorf("parallel mode translated no block")
			}
			for _, r := range []struct {
				name string
				out  []byte
				st   Stats
			}{{"translated", got, gotSt}, {"translated, tiny code cache", tiny, tinySt}, {"translated, parallel mode", par, parSt}} {
				if !bytes.Equal(r.out, want) {
					t.Errorf("%s: output differs from the interpreter's\n%s", r.name, lineDiff(r.out, want))
				}
				if r.st.Instructions != wantSt.Instructions {
					t.Errorf("%s: retired %d instructions, the interpreter %d", r.name, r.st.Instructions, wantSt.Instructions)
				}
			}
		})
	}
}

// TestTranslationRandomState runs random sequences of integer
// instructions, loads and stores (as the random differential test
// generates them), short forward branches, the system instructions the
// translator handles and some arbitrary words, from random registers,
// with the MMU off and on, at EL1 and EL0, on a translating and an
// interpreting machine, and requires the same state after: registers,
// flags, PSTATE, the exception registers, the monitor and memory. Unlike
// TestTranslationMatchesInterpreter, accesses may fault and exceptions
// happen mid-block, which is where translated code must bail exactly.
// KPEMU_JITROUNDS=n runs n sequences instead of 400, to search further
// after a change to the translator (20,000 take about 30 s).
func TestTranslationRandomState(t *testing.T) {
	rounds := envCount(t, "KPEMU_JITROUNDS", 400)
	var translated [2]uint64 // blocks, deterministic and parallel mode
	defer func() {
		if !t.Failed() && (translated[0] == 0 || translated[1] == 0) {
			t.Errorf("blocks translated: %d deterministic, %d parallel", translated[0], translated[1])
		}
	}()
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		g := &randGen{r: rng}
		// The scratch buffer's middle (x28, the generated accesses' base)
		// near a page boundary, the next page mapped read-write,
		// read-only or not at all, so accesses straddle pages and fault.
		mid := testData + 0x1000 + uint64(rng.IntN(65)-32)*16
		next := rng.IntN(3)
		sp := testData + 0x3000 + rng.Uint64N(32)
		sctlr := uint64(testSCTLR)
		if rng.IntN(2) == 0 {
			sctlr |= sctlrSA | sctlrSA0
		}
		for len(g.words) < 40 {
			switch rng.IntN(13) {
			case 0, 1, 2, 3:
				g.genInt()
			case 4, 5, 6:
				g.genLdSt()
			case 7: // a forward branch over a few instructions
				k := uint32(2 + rng.IntN(4))
				switch rng.IntN(4) {
				case 0:
					g.emit(0x54000000|k<<5|uint32(rng.IntN(16)), "") // B.cond
				case 1:
					g.emit(0xb4000000|uint32(rng.IntN(2))<<24|k<<5|g.reg(false), "") // CBZ/CBNZ
				case 2:
					g.emit(0x36000000|uint32(rng.IntN(2))<<24|uint32(rng.IntN(32))<<19|k<<5|g.reg(false), "") // TBZ/TBNZ
				default:
					g.emit(0x14000000|k, "") // B
				}
			case 8: // what the kernel does with the interrupt mask and current
				g.emit([]uint32{0xd53b4220, 0xd51b4220, 0xd50342df, 0xd50342ff, 0xd5384100, 0xd5184100, 0xd53800a0}[rng.IntN(7)], "")
			case 12: // exception entry and return: MRS and MSR of ELR, SPSR, ESR, FAR, TPIDR_EL1, TPIDR_EL0; NZCV, CurrentEL, SPSel
				sr := []uint32{0x4020, 0x4000, 0x5200, 0x6000, 0xd080, 0x3d040, 0x34200, 0x4240, 0x4200}[rng.IntN(9)] // op1, CRn, CRm, op2
				op := []uint32{0xd5380000, 0xd5180000}[rng.IntN(2)]                                                   // MRS, MSR
				g.emit(op|sr|g.reg(false), "")
			case 9: // an exclusive pair, or acquire/release and barriers, on the scratch buffer
				g.setBase()
				if rng.IntN(2) == 0 {
					g.emit(0xc85f7f60, "") // LDXR x0, [x27]
					g.emit(0xc8017f60, "") // STXR w1, x0, [x27]
					break
				}
				size := uint32(rng.IntN(4))
				g.emit(size<<30|0x089ffc00|27<<5|g.reg(true), "")                                 // STLR
				g.emit([]uint32{0xd5033bbf, 0xd50339bf, 0xd5033abf, 0xd5033b9f}[rng.IntN(4)], "") // DMB ISH, ISHLD, ISHST; DSB ISH
				g.emit(size<<30|0x08dffc00|27<<5|g.reg(true), "")                                 // LDAR
			case 10:
				if rng.IntN(2) == 0 {
					g.emit(rng.Uint32(), "")
					break
				}
				// SP-based (LDR, STR, STP pre-index, LDP post-index, LDR
				// post-index by 8), and SP moved (ADD #8, SUB #16, MOV
				// from x1): SP may be misaligned, with SCTLR_EL1.SA on or
				// off, and translated code checks it only after a move
				// that may misalign it.
				g.emit([]uint32{0xf94007e0, 0xf90003e1, 0xa9bf07e0, 0xa8c107e0, 0xf84087e0, 0x910023ff, 0xd10043ff, 0x9100003f}[rng.IntN(8)], "")
			default:
				if rng.IntN(3) == 0 {
					g.emit([]uint32{0xd65f03c0, 0xd63f03c0}[rng.IntN(2)], "") // RET, BLR x30
					break
				}
				// LDUR/STUR, maybe misaligned, maybe across the page
				// boundary near x28.
				size, load := uint32(rng.IntN(4)), uint32(rng.IntN(2))
				off := int64(rng.IntN(512) - 256)
				if rng.IntN(2) == 0 { // up to 8 bytes before the boundary
					off = int64(testData+0x1000) - int64(mid) - 1 - int64(rng.IntN(8))
				}
				if off < -256 || off > 255 {
					off = 0
				}
				imm := uint32(off) & 0x1ff
				g.emit(size<<30|0x38000000|load<<22|imm<<12|28<<5|g.reg(true), "")
			}
		}
		mmu, el0 := rng.IntN(2) == 1, rng.IntN(4) == 0
		regs := make([]uint64, 31)
		for i := range regs {
			switch rng.IntN(3) {
			case 0:
				regs[i] = testData + rng.Uint64N(0x1000)
			case 1:
				regs[i] = rng.Uint64()
			default:
				regs[i] = testCode + 4*rng.Uint64N(48)
			}
		}
		regs[28] = mid
		regs[30] = testCode + 4*rng.Uint64N(40) // RET and BLR land in the sequence
		// Deterministic mode's translated and interpreted runs, then
		// parallel mode's (under Step, on this goroutine).
		var states [4]string
		for i := range states {
			interpret, parallel := i%2 == 1, i >= 2
			m, c, _ := newTestMachineWith(t, g.words, Config{Interpret: interpret, Parallel: parallel})
			if mmu {
				pt := newPageTables(t, m, 1)
				for a := uint64(RAMBase); a < testData+0x4000; a += PageSize {
					switch {
					case a < testData:
						// Code and vectors: read-only, as memory EL0 can
						// write is never executable at EL1.
						pt.page(a, a, ptNormal|ptAPEL0|ptAPRO)
					case a == testData+0x1000 && next == 1:
						pt.page(a, a, ptNormal|ptAPEL0|ptAPRO)
					case a == testData+0x1000 && next == 2:
					default:
						pt.page(a, a, ptNormal|ptAPEL0)
					}
				}
				c.SetSysReg(MAIR_EL1, testMAIR)
				c.SetSysReg(TCR_EL1, tcr39)
				c.SetSysReg(TTBR0_EL1, pt.root)
				sctlr |= sctlrM
			}
			c.SetSysReg(SCTLR_EL1, sctlr)
			c.SetSysReg(CPACR_EL1, 3<<20) // the SIMD&FP loads and stores run
			c.SetSP(sp)
			for r, v := range regs {
				c.SetX(r, v)
			}
			c.setNZCV(uint64(round%16) << 28)
			if el0 {
				c.SetPSTATE(0)
			}
			if err := m.Step(80); err != nil {
				t.Fatal(err)
			}
			states[i] = describeState(t, m, c)
			if !interpret {
				translated[b2u(parallel)] += m.Stats().TranslatedBlocks
			}
		}
		for i := 0; i < len(states); i += 2 {
			if states[i] == states[i+1] {
				continue
			}
			var dis []string
			for _, w := range g.words {
				in, ok := armDecode(w)
				if ok {
					dis = append(dis, fmt.Sprintf("%08x %v", w, in))
				} else {
					dis = append(dis, fmt.Sprintf("%08x ?", w))
				}
			}
			t.Fatalf("round %d (mmu %v, el0 %v, parallel %v): translated and interpreted differ:\n%s\nsequence:\n%s",
				round, mmu, el0, i == 2, lineDiff([]byte(states[i]), []byte(states[i+1])), strings.Join(dis, "\n"))
		}
	}
}

// describeState describes everything a random sequence can change.
func describeState(t *testing.T, m *Machine, c *CPU) string {
	var b strings.Builder
	for r := 0; r < 31; r++ {
		fmt.Fprintf(&b, "x%d %#x\n", r, c.X(r))
	}
	fmt.Fprintf(&b, "sp %#x\npc %#x\nnzcv %#x\npstate %#x\nwfi %v\n", c.SP(), c.PC(), c.nzcv(), c.PSTATE(), c.Waiting())
	for _, r := range []SysReg{ESR_EL1, FAR_EL1, ELR_EL1, SPSR_EL1, SP_EL0, TPIDR_EL1, TPIDR_EL0} {
		fmt.Fprintf(&b, "%v %#x\n", r, c.SysReg(r))
	}
	fmt.Fprintf(&b, "monitor %v %#x %d %#x, machine's count %d\ninstructions %d\n",
		c.excValid, c.excAddr, c.excSize, c.excPA, m.reservations, m.Stats().Instructions)
	data := make([]byte, 0x9000)
	if err := m.ReadMem(testData, data); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "memory %x\n", sha256.Sum256(data))
	return b.String()
}

// TestPerfMap checks Config.PerfMap: a line per translated block, in
// perf's "ADDR SIZE NAME" format, naming the guest pc.
func TestPerfMap(t *testing.T) {
	var perfMap bytes.Buffer
	_, st := runWith(t, coremarkProg, Config{PerfMap: &perfMap}, func(m *Machine) {
		var word [4]byte
		binary.LittleEndian.PutUint32(word[:], 2)
		if err := m.WriteMem(elfSymbol(t, coremarkProg, "iterations"), word[:]); err != nil {
			t.Fatal(err)
		}
	})
	lines := strings.Split(strings.TrimSuffix(perfMap.String(), "\n"), "\n")
	if st.TranslatedBlocks == 0 {
		t.Skip("no block translation on this host")
	}
	if uint64(len(lines)) != st.TranslatedBlocks {
		t.Fatalf("%d lines for %d blocks", len(lines), st.TranslatedBlocks)
	}
	for _, l := range lines {
		var addr, size, pc uint64
		var n int
		if _, err := fmt.Sscanf(l, "%x %x kpemu@%v+%d", &addr, &size, &pc, &n); err != nil || size == 0 || pc < RAMBase || n < 1 {
			t.Fatalf("line %q: %v", l, err)
		}
	}
}

// TestJumpCache calls a function on another page through a register, at
// EL1 and EL0, with the MMU on, often enough that translated code finds
// both ends in the jump cache; then changes what that call reaches in
// each way the cache must notice: a remap and TLBI, a store to the
// callee's code, a full code cache, and (with non-global mappings) a
// context switch.
// The translating machine must run the new code at once, and retire the
// same instructions with the same results as the interpreter.
func TestJumpCache(t *testing.T) {
	const va = 0x30000000
	const pa1, pa2 = testData + 0x1000, testData + 0x2000
	for _, tc := range []struct {
		name      string
		el0, ng   bool
		unchained bool // EL1's table keeps no pc of a non-global page
	}{{"el1", false, false, false}, {"el0", true, true, false}, {"el1-non-global", false, true, true}} {
		el0, ng := tc.el0, tc.ng
		t.Run(tc.name, func(t *testing.T) {
			type result struct{ x0, x10, pc, retired uint64 }
			run := func(interpret bool) (out []result) {
				m, c, pt := newMMUMachineWith(t, prog("blr x1", "add x10, x10, x0", "b #-8"), Config{Interpret: interpret})
				if !interpret && !m.jits[0].enabled() {
					t.Skip("no block translation on this host")
				}
				attrs := uint64(ptNormal)
				if ng {
					attrs |= ptNG
				}
				if el0 {
					attrs |= ptAPEL0
					pt.page(testCode, testCode, ptNormal|ptAPEL0)
				}
				da := pt.page(va, pa1, attrs)
				writeLeaf(t, m, pa1, "mov x0, #1")
				writeLeaf(t, m, pa2, "mov x0, #2")
				// A second address space (ASID 2) that maps va to pa1.
				pt2 := &pageTables{t: t, m: m, next: pt.next, start: 1}
				pt2.root = pt2.alloc()
				pt2.page(testCode, testCode, ptNormal|ptAPEL0)
				pt2.page(va, pa1, attrs)
				c.SetSysReg(TCR_EL1, tcr39|tcrAS)
				c.SetSysReg(TTBR0_EL1, pt.root|1<<48)
				c.SetX(1, va)
				if el0 {
					c.SetPSTATE(0)
				}
				steps := []func(){
					func() {},
					func() { // remap va to pa2, and TLBI as the kernel would
						mustWrite64(t, m, da, pa2|attrs|ptPage)
						c.tlbi(tlbiVAAE1, va>>12)
					},
					func() { mustWrite32(t, m, pa2, I("mov x0, #3")) }, // new code
					func() { // other code fills the code cache, which drops every block
						for flushes := m.jits[0].flushes.Load(); m.jits[0].enabled() && m.jits[0].flushes.Load() == flushes; {
							m.jits[0].add(m.cpus[0], jitCode{code: make([]byte, 4096)})
						}
					},
				}
				if ng {
					steps = append(steps,
						func() { c.SetSysReg(TTBR0_EL1, pt2.root|2<<48) },
						// back to ASID 1, whose jump cache entries are pa2's
						func() { c.SetSysReg(TTBR0_EL1, pt.root|1<<48) })
				}
				for _, step := range steps {
					step()
					if err := m.Step(3001); err != nil {
						t.Fatal(err)
					}
					// Warm, the loop runs in translated code from end to
					// end: far fewer entries than its 600 round trips
					// between the pages.
					entries := m.Stats().BlockEntries
					if err := m.Step(3001); err != nil {
						t.Fatal(err)
					}
					if e := m.Stats().BlockEntries - entries; !interpret && !tc.unchained && e >= 10 {
						t.Errorf("step %d: %d entries into translated code in 3,001 instructions", len(out), e)
					}
					out = append(out, result{c.X(0), c.X(10), c.PC(), m.Stats().Instructions})
				}
				return out
			}
			want, got := run(true), run(false)
			for i, x0 := range []uint64{1, 2, 3, 3, 1, 3}[:len(want)] {
				if want[i].x0 != x0 {
					t.Errorf("step %d: interpreter's x0 = %d, want %d", i, want[i].x0, x0)
				}
				if got[i] != want[i] {
					t.Errorf("step %d: translated %+v, interpreted %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestStoreToCodeFlushesOnce: a store over a decoded instruction of a
// page with translated blocks drops them and empties the jump caches;
// another store to the page, whose blocks are gone, has nothing to
// empty them for.
func TestStoreToCodeFlushesOnce(t *testing.T) {
	m, c, _ := newTestMachineWith(t, prog("mov x1, #100", "subs x1, x1, #1", "b.ne #-4", "nop", "nop", "b #0"), Config{})
	if err := m.Step(1000); err != nil {
		t.Fatal(err)
	}
	if m.Stats().TranslatedBlocks == 0 {
		t.Fatal("nothing translated")
	}
	// runFast looks blocks up through the CPU's copy of the table.
	if c.pageBlocks == nil || c.pageBlocks != c.page.blocks[0] {
		t.Fatalf("pageBlocks %p, the page's table %p", c.pageBlocks, c.page.blocks[0])
	}
	gen := c.jumps.gen
	mustWrite32(t, m, testCode+12, I("nop"))
	if c.jumps.gen == gen {
		t.Fatal("a store over a translated page's code left the jump caches as they were")
	}
	gen = c.jumps.gen
	mustWrite32(t, m, testCode+16, I("nop"))
	if c.jumps.gen != gen {
		t.Error("a store to a page without blocks emptied the jump caches")
	}
}

// TestJumpCacheGenerations empties a jump cache table again and again,
// past the point where its generations wrap: an entry must never be
// found again once its table was emptied, nor an entry of one pc for
// another pc of the same slot.
func TestJumpCacheGenerations(t *testing.T) {
	var c CPU
	c.clearJumps()
	const pc uint64 = 0xffff800000123454
	const other = pc ^ (1<<2 | 1<<(jumpSetBits+2)) // the same set
	if jumpSet(pc) != jumpSet(other) {
		t.Fatalf("sets %d and %d", jumpSet(pc), jumpSet(other))
	}
	b := &block{chain: 0x1000}
	c.xlate, c.el = true, 1
	for i := range 3 * jumpSize {
		if i%jumpSize == 5 { // an entry that must outlive no wrap
			c.noteJump(pc, b)
			if !c.jumpHit(pc) || c.jumpHit(other) {
				t.Fatalf("flush %d: entered %#x, hit %v, hit for %#x %v", i, pc, c.jumpHit(pc), other, c.jumpHit(other))
			}
		}
		c.flushJumpsEL(1)
		if c.jumpHit(pc) {
			t.Fatalf("flush %d: %#x still hits", i, pc)
		}
		c.flushJumpsEL(0) // the other table's generations are its own
		if c.jumpHit(pc) {
			t.Fatalf("flush %d of EL0's table: %#x hits again", i, pc)
		}
	}
}

// TestJumpCacheASIDs: EL0's entries belong to the address space (ASID)
// they were entered under, as TLB entries do: another ASID's same pc
// misses, a context switch back finds them again, and a TLBI by ASID, or
// by VA and ASID, drops them and no other ASID's; a TLBI by VA of all
// ASIDs drops every ASID's. EL1's, of global pages, serve every ASID.
// However often one ASID's entries are dropped, an older generation's
// never match again.
func TestJumpCacheASIDs(t *testing.T) {
	var c CPU
	c.clearJumps()
	c.xlate = true
	const user, kernel = 0x400134, 0xffff800008000454
	chainAt := func(pc uint64) uintptr { // 0: a miss
		el := c.el & 1
		for _, e := range c.jumps.tables[el][jumpSet(pc)*jumpWays:][:jumpWays] {
			if e.tag == pc^c.jumps.gen[el] {
				return e.chain
			}
		}
		return 0
	}
	switchTo := func(asid uint64, wide bool) {
		c.sys[TCR_EL1] = 0
		if wide {
			c.sys[TCR_EL1] = tcrAS
		}
		c.sys[TTBR0_EL1] = asid << 48
		c.translationChanged(TTBR0_EL1)
	}
	enter := func(el uint8, pc uint64, chain uintptr) {
		c.el = el
		c.noteJump(pc, &block{chain: chain})
	}
	want := func(step string, el uint8, pc uint64, chain uintptr) {
		t.Helper()
		c.el = el
		if got := chainAt(pc); got != chain {
			t.Errorf("%s: EL%d %#x found %#x, want %#x", step, el, pc, got, chain)
		}
	}
	switchTo(1, false)
	enter(0, user, 0x1000)
	enter(1, kernel, 0x3000)
	switchTo(2, false)
	want("ASID 2", 0, user, 0)
	want("ASID 2", 1, kernel, 0x3000)
	enter(0, user, 0x2000)
	switchTo(1, false)
	want("back to ASID 1", 0, user, 0x1000)
	switchTo(2, false)
	want("back to ASID 2", 0, user, 0x2000)
	switchTo(0x102, true) // 16-bit ASIDs: 0x102 is not 2
	want("ASID 0x102", 0, user, 0)
	switchTo(1, false)
	c.tlbi(tlbiASIDE1, 1<<48)
	want("after TLBI ASID 1", 0, user, 0)
	want("after TLBI ASID 1", 1, kernel, 0x3000)
	switchTo(2, false)
	want("ASID 2 after TLBI ASID 1", 0, user, 0x2000)
	c.tlbi(tlbiVAE1, 3<<48|0x500) // another ASID's page
	want("ASID 2 after TLBI VA, ASID 3", 0, user, 0x2000)
	c.tlbi(tlbiVAE1, 2<<48|user>>12)
	want("after TLBI VA, ASID 2", 0, user, 0)
	enter(0, user, 0x2000)
	switchTo(1, false)
	enter(0, user, 0x1000)
	c.tlbi(tlbiVAAE1, 0x500)
	want("ASID 1 after TLBI VA, all ASIDs", 0, user, 0)
	switchTo(2, false)
	want("ASID 2 after TLBI VA, all ASIDs", 0, user, 0)
	// ASID 2's generations until they wrap, twice over, each entry gone
	// with the TLBI after it.
	for i := range 2 * jumpSets {
		enter(0, user, uintptr(0x4000+i))
		c.tlbi(tlbiASIDE1, 2<<48)
		if got := chainAt(user); got != 0 {
			t.Fatalf("TLBI ASID 2 number %d: found %#x", i+1, got)
		}
	}
}

// TestJumpCacheSpreadsPages enters the blocks at one offset of 64 pages,
// as a kernel's functions that start alike in each page: the jump cache
// must keep them all.
func TestJumpCacheSpreadsPages(t *testing.T) {
	var c CPU
	c.clearJumps()
	c.el = 1
	const base = 0xffff800008000454
	for i := range uint64(64) {
		c.noteJump(base+i*PageSize, &block{chain: 0x1000})
	}
	for i := range uint64(64) {
		if pc := base + i*PageSize; !c.jumpHit(pc) {
			t.Errorf("%#x: not in the jump cache", pc)
		}
	}
}

// TestJumpCacheSurvivesOthersChanges: the changes a kernel makes to a
// process's translations and code (TLBI ASIDE1, TLBI VAE1 of its pages,
// stores over its freed text) keep the kernel's own translations: EL1's
// jump cache table and its global micro-TLB entries. The same changes
// to the kernel's own pages empty them.
func TestJumpCacheSurvivesOthersChanges(t *testing.T) {
	const va = 0x30000000 // EL0's code: another GiB than the kernel's
	const pa = testData + 0x3000
	m, c, pt := newMMUMachine(t, prog("ldr x0, [x1]", "add x10, x10, #1", "b #-8"))
	if !m.jits[0].enabled() {
		t.Skip("no block translation on this host")
	}
	pt.page(va, pa, ptNormal|ptAPEL0|ptAPRO|ptNG)
	mustWrite32(t, m, pa, I("add x11, x11, #1"))
	mustWrite32(t, m, pa+4, I("b #-4"))
	// First EL0's loop, then EL1's: EL1's table holds the kernel's page only.
	c.SetPSTATE(0)
	c.SetPC(va)
	if err := m.Step(3001); err != nil {
		t.Fatal(err)
	}
	c.SetPSTATE(5) // EL1h
	c.SetPC(testCode)
	c.SetX(1, testData)
	if err := m.Step(3001); err != nil {
		t.Fatal(err)
	}
	kept := func(what string, want bool) {
		t.Helper()
		u := &c.utlb[testData>>12&utlbMask]
		if got := c.jumpHit(testCode) && u.rtag == utlbTag(testData, 1); got != want {
			t.Errorf("%s: the kernel's entries kept %v, want %v", what, got, want)
		}
	}
	kept("warm", true)
	c.tlbi(tlbiASIDE1, 1<<48)
	kept("TLBI ASIDE1", true)
	c.tlbi(tlbiVAE1, va>>12|1<<48)
	kept("TLBI VAE1 of EL0's page", true)
	gen0 := c.jumps.gen[0]
	mustWrite32(t, m, pa+4, I("b #-4")) // over EL0's translated code
	if c.jumps.gen[0] == gen0 {
		t.Error("a store over EL0's code kept EL0's table")
	}
	kept("a store over EL0's code", true)
	c.tlbi(tlbiVAE1, (testData+0x5000)>>12)
	kept("TLBI VAE1 of the kernel's GiB", false)
	if err := m.Step(3001); err != nil {
		t.Fatal(err)
	}
	kept("warm again", true)
	mustWrite32(t, m, testCode+4, I("add x10, x10, #1"))
	if c.jumpHit(testCode) {
		t.Error("a store over the kernel's code kept EL1's table")
	}
}

// TestTLBIInsideBlock remaps a 2 MiB block and invalidates it by the VA
// of another page of it than the one used: what was cached of the page
// used (micro-TLB, fetch page, jump cache) goes too, since the TLB held
// the block as one entry.
func TestTLBIInsideBlock(t *testing.T) {
	const va = 0x60000000 // a 2 MiB block at VA 0x60000000
	const pa1, pa2 = RAMBase + 0x200000, RAMBase
	const off = 0x1f0000        // where the code and data are in each
	const other = va + 0x1ff000 // its last page
	for _, interpret := range []bool{false, true} {
		m, c, pt := newMMUMachineWith(t, prog(
			"blr x1", "ldr x4, [x1, #8]", // the block's code and data
			"str x3, [x2]", // remap
			"tlbi vaae1, x5",
			"blr x1", "ldr x6, [x1, #8]",
			"b #-24",
		), Config{Interpret: interpret})
		da := pt.set(va, 2, pa1|ptNormal|ptBlock)
		for i, p := range []uint64{pa1 + off, pa2 + off} {
			mustWrite32(t, m, p, I(fmt.Sprintf("mov x0, #%d", i+1)))
			mustWrite32(t, m, p+4, I("ret"))
			mustWrite64(t, m, p+8, uint64(i+1))
		}
		c.SetX(1, va+off)
		c.SetX(2, da)
		c.SetX(5, other>>12)
		// Warm: the loop remaps pa1 over pa1, many times.
		c.SetX(3, pa1|ptNormal|ptBlock)
		if err := m.Step(3000); err != nil {
			t.Fatal(err)
		}
		for c.PC() != testCode+8 { // after the first ldr
			if err := m.Step(1); err != nil {
				t.Fatal(err)
			}
		}
		c.SetX(3, pa2|ptNormal|ptBlock)
		if err := m.Step(6); err != nil {
			t.Fatal(err)
		}
		if c.X(0) != 2 || c.X(6) != 2 {
			t.Errorf("interpret %v: after the remap and TLBI, code gave %d and data %d, want 2 and 2", interpret, c.X(0), c.X(6))
		}
	}
}

// TestTranslatedPageCrossing runs loads and stores that cross from one
// virtual page into the next, hot enough to be translated, where the
// next page is mapped elsewhere in RAM or not at all: the translated
// code must leave such an access to the interpreter, which reads both
// pages through their own translations or faults.
func TestTranslatedPageCrossing(t *testing.T) {
	const va = 0x30000000
	const pa1, pa2 = testData + 0x1000, testData + 0x4000 // not adjacent
	for _, insn := range []string{"ldr x0, [x1]", "ldp x4, x5, [x1]", "str x3, [x1]"} {
		for _, mapped := range []bool{true, false} {
			name := insn
			if !mapped {
				name += "/unmapped"
			}
			t.Run(name, func(t *testing.T) {
				type result struct{ x0, x4, x5, end, after, start, pc, far, retired uint64 }
				run := func(interpret bool) result {
					// The load and store at the page's start fill the
					// micro-TLB entry the crossing access then finds.
					m, c, pt := newMMUMachineWith(t, prog("ldr x6, [x7]", "str x6, [x7]", insn, "b #-12"), Config{Interpret: interpret})
					pt.page(va, pa1, ptNormal)
					if mapped {
						pt.page(va+PageSize, pa2, ptNormal)
					}
					mustWrite64(t, m, pa1+PageSize-8, 0x1111111100000000)
					mustWrite64(t, m, pa1+PageSize, 0x4444444444444444) // what a wrong read finds
					mustWrite64(t, m, pa2, 0x2222222222222222)
					c.SetX(1, va+PageSize-4)
					c.SetX(7, va)
					c.SetX(3, 0x3333333355555555)
					if err := m.Step(2001); err != nil {
						t.Fatal(err)
					}
					return result{c.X(0), c.X(4), c.X(5), mustRead64(t, m, pa1+PageSize-8), mustRead64(t, m, pa1+PageSize), mustRead64(t, m, pa2),
						c.PC(), c.SysReg(FAR_EL1), m.Stats().Instructions}
				}
				want, got := run(true), run(false)
				if got != want {
					t.Errorf("translated %+x\ninterpreted %+x", got, want)
				}
			})
		}
	}
}

// TestTranslatedStoreToNewCode stores, from translated code, into a page
// the loop also calls into, so that the page became code after the store
// first filled the micro-TLB; then the store overwrites the called
// instruction. The call must run the new instruction: a translated store
// into a page of code goes through the interpreter, which drops what it
// overwrote.
func TestTranslatedStoreToNewCode(t *testing.T) {
	const va = 0x30000000
	const pa = testData + 0x1000
	run := func(interpret bool) (x0, retired uint64) {
		m, c, pt := newMMUMachineWith(t, prog("str x3, [x7]", "blr x1", "add x10, x10, x0", "b #-12"), Config{Interpret: interpret})
		pt.page(va, pa, ptNormal)
		mustWrite32(t, m, pa, I("mov x0, #1"))
		mustWrite32(t, m, pa+4, I("ret"))
		c.SetX(1, va)
		c.SetX(7, va+0x100) // data beside the code, at first
		c.SetX(3, uint64(I("mov x0, #2")))
		if err := m.Step(4001); err != nil {
			t.Fatal(err)
		}
		c.SetX(7, va) // now over the called instruction
		if err := m.Step(4001); err != nil {
			t.Fatal(err)
		}
		return c.X(0), m.Stats().Instructions
	}
	x0, n := run(false)
	wantX0, wantN := run(true)
	if wantX0 != 2 {
		t.Fatalf("interpreter: x0 = %d, want 2", wantX0)
	}
	if x0 != wantX0 || n != wantN {
		t.Errorf("translated: x0 = %d after %d instructions; interpreted: %d after %d", x0, n, wantX0, wantN)
	}
}

// TestTranslatedPSTATEAccess runs MSR NZCV and MRS of NZCV, CurrentEL
// and SPSel (what the kretprobe trampoline builds a PSTATE from) hot, at
// EL1 with either stack pointer and at EL0, and requires the registers
// the interpreter leaves.
func TestTranslatedPSTATEAccess(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pstate uint64
		code   []string
	}{
		// Each iteration's reads are summed, so a wrong one shows.
		{"el1h", 5, []string{"msr nzcv, x1", "mrs x2, nzcv", "mrs x3, currentel", "mrs x4, spsel", "add x6, x6, x2", "add x7, x7, x3", "add x8, x8, x4", "add x1, x1, x5", "b #-32"}},
		{"el1t", 4, []string{"msr nzcv, x1", "mrs x2, nzcv", "mrs x3, currentel", "mrs x4, spsel", "add x6, x6, x2", "add x7, x7, x3", "add x8, x8, x4", "add x1, x1, x5", "b #-32"}},
		{"el0", 0, []string{"msr nzcv, x1", "mrs x2, nzcv", "add x6, x6, x2", "add x1, x1, x5", "b #-16"}},
		// Registers read into a destination the block caches (x2 is
		// read twice) and one it does not; SP_EL0 at EL1h is not the SP.
		{"el1h/sysregs", 5, []string{"msr sp_el0, x1", "mrs x2, sp_el0", "msr tpidr_el1, x1", "mrs x3, tpidr_el1", "add x6, x6, x2", "add x7, x7, x2", "add x8, x8, x3", "add x1, x1, x5", "b #-32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(interpret bool) [6]uint64 {
				m, c, _ := newTestMachineWith(t, prog(tc.code...), Config{Interpret: interpret})
				c.SetX(5, 3<<27)
				c.SetPSTATE(tc.pstate)
				if err := m.Step(2001); err != nil {
					t.Fatal(err)
				}
				return [6]uint64{c.X(1), c.X(6), c.X(7), c.X(8), c.PSTATE(), c.PC()}
			}
			if got, want := run(false), run(true); got != want {
				t.Errorf("translated x1, the sums, PSTATE, pc %#x\ninterpreted %#x", got, want)
			}
		})
	}
}

// TestTranslatedLoop runs blocks that branch back to themselves, which
// translated code repeats without writing its cached registers back,
// until an 8-byte load straddles a page end and the code (with the MMU
// on) bails before it, at the block's first instruction. That exit must write back what
// the iterations before wrote, and only values the registers hold: x6,
// written before it is read, is written back by every exit of a loop,
// so the block's entry must load it. In the second program every
// iteration's load straddles; the budgets end the run at each point of
// an iteration. A last block loops on itself until the budget runs out.
func TestTranslatedLoop(t *testing.T) {
	const boundary = testData + 0x1000
	for _, tc := range []struct {
		name  string
		code  []string
		x1    uint64
		steps []int
	}{
		{"walk", []string{"ldr x2, [x1]", "add x4, x4, x2", "add x6, x2, #1", "add x1, x1, #4", "add x3, x3, #1", "cmp x3, x5", "b.ne #-24", "b #0"},
			boundary - 400, []int{5003}}, // straddles at the 100th iteration
		{"straddle", []string{"ldr x2, [x1]", "add x6, x2, #1", "add x4, x4, x6", "add x3, x3, #1", "cmp x3, x5", "b.ne #-20", "b #0"},
			boundary - 4, []int{601, 602, 603, 604, 605, 606}},
	} {
		for _, steps := range tc.steps {
			type result struct{ x1, x2, x3, x4, x6, pc, retired uint64 }
			run := func(interpret bool) result {
				// With the MMU on: a load that crosses a page bails
				// (the micro-TLB's tag is the last byte's page).
				m, c, _ := newMMUMachineWith(t, prog(tc.code...), Config{Interpret: interpret})
				for a := uint64(boundary - 512); a < boundary+512; a += 8 {
					mustWrite64(t, m, a, a*0x9e3779b97f4a7c15)
				}
				c.SetX(1, tc.x1)
				c.SetX(5, 200)
				c.SetX(6, 0x6666)
				if err := m.Step(uint64(steps)); err != nil {
					t.Fatal(err)
				}
				return result{c.X(1), c.X(2), c.X(3), c.X(4), c.X(6), c.PC(), m.Stats().Instructions}
			}
			want, got := run(true), run(false)
			if got != want {
				t.Errorf("%s, %d steps: translated %+x\ninterpreted %+x", tc.name, steps, got, want)
			}
			if tc.name == "walk" && (want.x3 != 200 || want.pc != testCode+28) {
				t.Errorf("interpreted %+x: the loop did not run to its end", want)
			}
		}
	}
	// The loop's first translated iteration faults: the exception (a
	// parking vector) must find x6 as the interpreted iteration before
	// left it, not whatever its host register held.
	const va = 0x30000000
	type result struct{ x1, x6, pc, esr, retired uint64 }
	run := func(interpret bool) result {
		m, c, pt := newMMUMachineWith(t, prog("ldr x2, [x1]", "add x6, x2, #1", "add x4, x4, x6", "add x1, x1, #8", "b #-16"), Config{Interpret: interpret})
		pt.page(va, testData+0x1000, ptNormal) // and the next page unmapped
		mustWrite64(t, m, testData+0x2000-8, 0x5555)
		c.SetX(1, va+PageSize-8)
		if err := m.Step(100); err != nil {
			t.Fatal(err)
		}
		return result{c.X(1), c.X(6), c.PC(), c.SysReg(ESR_EL1), m.Stats().Instructions}
	}
	want, got := run(true), run(false)
	if got != want || want.x6 != 0x5556 {
		t.Errorf("fault: translated %+x\ninterpreted %+x", got, want)
	}
}

// TestTranslatedCallHigh calls through a register from code at a kernel
// address, as the kernel's indirect calls do: BLR's return address
// then needs a 64-bit immediate, which must not overwrite the target.
func TestTranslatedCallHigh(t *testing.T) {
	const fn = testData + 0x1000
	run := func(interpret bool) (x10, x30, pc, retired uint64) {
		m, c, _ := newTestMachineWith(t, prog("blr x1", "add x10, x10, x0", "b #-8"), Config{Interpret: interpret})
		lo := newPageTables(t, m, 1)
		hi := &pageTables{t: t, m: m, next: lo.next, start: 1}
		hi.root = hi.alloc()
		hi.page(testHighVA, testCode&^(PageSize-1), ptNormal)
		hi.page(testHighVA+PageSize, fn, ptNormal)
		mustWrite32(t, m, fn, I("mov x0, #1"))
		mustWrite32(t, m, fn+4, I("ret"))
		c.SetSysReg(MAIR_EL1, testMAIR)
		c.SetSysReg(TCR_EL1, tcr39)
		c.SetSysReg(TTBR0_EL1, lo.root)
		c.SetSysReg(TTBR1_EL1, hi.root)
		c.SetSysReg(SCTLR_EL1, testSCTLR|sctlrM)
		c.SetPC(testHighVA + testCode&(PageSize-1))
		c.SetX(1, testHighVA+PageSize)
		if err := m.Step(2001); err != nil {
			t.Fatal(err)
		}
		return c.X(10), c.X(30), c.PC(), m.Stats().Instructions
	}
	want10, want30, wantPC, wantN := run(true)
	got10, got30, gotPC, gotN := run(false)
	if got10 != want10 || got30 != want30 || gotPC != wantPC || gotN != wantN {
		t.Errorf("translated x10 %d x30 %#x pc %#x after %d; interpreted x10 %d x30 %#x pc %#x after %d",
			got10, got30, gotPC, gotN, want10, want30, wantPC, wantN)
	}
	if want10 < 300 {
		t.Errorf("interpreted: x10 = %d, want one per call", want10)
	}
}

// TestTranslatedStoreSnoop stores, with the MMU on, near and then into
// the granule another CPU's exclusive monitor holds: translated code must
// clear the monitor exactly at the store into the granule, as the
// interpreter's store does.
func TestTranslatedStoreSnoop(t *testing.T) {
	const va = 0x30000000
	const pa = testData + 0x1000
	for _, at := range []uint64{0x100, 0x400} { // 0x400: never stored to
		type result struct {
			valid           bool
			x1, x2, retired uint64
		}
		run := func(interpret bool) result {
			m, c, pt := newMMUMachineWith(t, prog("str x3, [x1]", "add x1, x1, #8", "subs x2, x2, #1", "b.ne #-12", "b #0"), Config{Interpret: interpret, NumCPUs: 2})
			pt.page(va, pa, ptNormal)
			o := m.CPU(1)
			o.excValid, o.excAddr, o.excSize, o.excPA = true, va+at, 3, pa+at
			m.reservations++
			c.SetX(1, va)
			c.SetX(2, 0x300/8)
			c.SetX(3, 7)
			// Stop where the loop's store has just reached 0x100.
			if err := m.Step(4*0x100/8 + 1); err != nil {
				t.Fatal(err)
			}
			if o.excValid != (at == 0x400) {
				t.Errorf("interpret %v: monitor at %#x valid %v after the store at 0x100", interpret, at, o.excValid)
			}
			if err := m.Step(2000); err != nil {
				t.Fatal(err)
			}
			return result{o.excValid, c.X(1), c.X(2), m.Stats().Instructions}
		}
		want, got := run(true), run(false)
		if got != want || want.valid != (at == 0x400) {
			t.Errorf("monitor at %#x: translated %+v, interpreted %+v", at, got, want)
		}
	}
}

// TestTranslatedIntegerOps runs each of these instructions in a loop
// whose inputs change every iteration, translated and interpreted, and
// requires the same results and flags: the byte reverses, the long and
// high multiplies, the conditional compares (each condition outcome) and
// the system registers the kernel reads that translated code answers,
// the counters among them (each read's value, in the XOR of all).
func TestTranslatedIntegerOps(t *testing.T) {
	for _, insn := range []string{
		"rev x3, x1", "rev w3, w1", "rev16 x3, x1", "rev16 w3, w1", "rev32 x3, x1",
		"smaddl x3, w1, w2, x8", "smsubl x3, w1, w2, x8", "umaddl x3, w1, w2, x8", "umsubl x3, w1, w2, x8",
		"smulh x3, x1, x2", "umulh x3, x1, x2",
		"ccmp x1, x2, #5, ne", "ccmp w1, #7, #2, lt", "ccmn x1, x2, #8, hi", "ccmn w1, #31, #0, ge", "ccmp x1, x2, #3, al",
		"mrs x3, dczid_el0", "mrs x3, mdscr_el1", "mrs x3, cntvct_el0", "mrs x3, cntpct_el0",
	} {
		type result struct{ x3, x5, nzcv, retired uint64 }
		run := func(interpret bool) result {
			m, c, _ := newTestMachineWith(t, prog("add x8, x8, #3", insn, "mrs x4, nzcv", "eor x5, x5, x3", "eor x5, x5, x4",
				"add x1, x1, x6", "add x2, x2, x7", "subs x9, x9, #1", "b.ne #-32", "b #0"), Config{Interpret: interpret})
			for r, v := range map[int]uint64{1: 0x0123456789abcdef, 2: 0xfedcba9876543210, 6: 0x9e3779b97f4a7c15,
				7: 0x5851f42d4c957f2d, 8: 0x1111, 9: 200} {
				c.SetX(r, v)
			}
			c.SetSysReg(MDSCR_EL1, 0x1000)
			// Two runs: the second's counter counts the first's too.
			for _, n := range []uint64{1000, 2000} {
				if err := m.Step(n); err != nil {
					t.Fatal(err)
				}
			}
			return result{c.X(3), c.X(5), c.nzcv(), m.Stats().Instructions}
		}
		if want, got := run(true), run(false); got != want {
			t.Errorf("%s: translated %+x, interpreted %+x", insn, got, want)
		}
	}
}

// TestTranslatedParallelStores runs each store and barrier whose
// translation differs in parallel mode (STLR becomes XCHG, every store
// checks for code after it lands, DMB may fence) in a loop over a
// buffer, translated and interpreted in parallel mode, and requires the
// same registers and memory. The buffer's page holds code too (a RET
// called once), which its micro-TLB entry does not know, having been
// filled by a store before: translated stores there stop right after
// they land, for runFast to do storedPar's bookkeeping.
func TestTranslatedParallelStores(t *testing.T) {
	for _, insn := range []string{
		"stlr x3, [x10]", "stlr w3, [x10]", "stlrh w3, [x10]", "stlrb w3, [x10]",
		"str x3, [x10]", "strh w3, [x10, #2]", "strb w3, [x10, #5]", "stp x3, x1, [x10]", "stp w3, w1, [x10, #-8]",
		"str x3, [x10], #0", "str w3, [x10, #-4]!", "dc zva, x10",
		"dmb ish", "dmb ishld", "dmb ishst", "dsb ish", "dmb sy", "ldar x4, [x10]",
	} {
		type result struct {
			x3, x5, x10, retired uint64
			mem                  [sha256.Size]byte
		}
		run := func(interpret bool) result {
			m, c, _ := newTestMachineWith(t, prog("str xzr, [x10]", "blr x11",
				insn, "ldr x4, [x10]", "eor x5, x5, x4",
				"add x3, x3, x6", "add x10, x10, #8", "subs x9, x9, #1", "b.ne #-24", "b #0"), Config{Interpret: interpret, Parallel: true})
			mustWrite32(t, m, testData+0x800, I("ret"))
			for r, v := range map[int]uint64{1: 0x0123456789abcdef, 3: 0xfedcba9876543210, 6: 0x9e3779b97f4a7c15,
				9: 200, 10: testData + 0x100, 11: testData + 0x800} {
				c.SetX(r, v)
			}
			if err := m.Step(3000); err != nil {
				t.Fatal(err)
			}
			data := make([]byte, 0x1000)
			if err := m.ReadMem(testData, data); err != nil {
				t.Fatal(err)
			}
			if !interpret && m.Stats().TranslatedBlocks == 0 {
				t.Errorf("%s: nothing translated", insn)
			}
			return result{c.X(3), c.X(5), c.X(10), m.Stats().Instructions, sha256.Sum256(data)}
		}
		if want, got := run(true), run(false); got != want {
			t.Errorf("%s: translated %+x, interpreted %+x", insn, got, want)
		}
	}
}

// TestTranslatedStoresToCode stores "mov x3, #i; ret" into a function
// and calls it, then zeroes it with DC ZVA and calls it again (the zero
// word is UDF: the handler returns 0x7ff), 64 times, counting calls that
// returned a stale x3. The function's page was mapped for stores before
// it held code, so in parallel mode translated stores reach it through
// the micro-TLB and must check for code themselves; both kinds of store
// address (the micro-TLB's host pointer, DC ZVA's RAM offset) must name
// the page.
func TestTranslatedStoresToCode(t *testing.T) {
	fn := uint64(testData + 0x40)
	for _, cfg := range []Config{{}, {Interpret: true}, {Parallel: true}, {Parallel: true, Interpret: true}} {
		m, c, _ := newTestMachineWith(t, prog("str xzr, [x22]", "mov x1, #0", "mov x10, #0",
			"mov w4, #3", "movk w4, #0xd280, lsl #16", "add w4, w4, w1, lsl #5", "str w4, [x22]", "str w25, [x22, #4]",
			"blr x22", "cmp x3, x1", "b.eq #8", "add x10, x10, #1",
			"dc zva, x22", "blr x22", "cmp x3, #0x7ff", "b.eq #8", "add x10, x10, #1",
			"add x1, x1, #1", "cmp x1, #64", "b.ne #-64", "b #0"), cfg)
		for i, w := range prog("mov x3, #0x7ff", "msr elr_el1, x30", "eret") {
			mustWrite32(t, m, testVBAR+0x200+uint64(4*i), w)
		}
		c.SetX(22, fn)
		c.SetX(25, uint64(I("ret")))
		if err := m.Step(20000); err != nil {
			t.Fatal(err)
		}
		if c.X(1) != 64 || c.X(10) != 0 {
			t.Errorf("%+v: %d calls, %d returned stale code (pc %#x)", cfg, c.X(1), c.X(10), c.PC())
		}
	}
}

// TestReadFillGrantsStores: a load's micro-TLB fill also grants stores
// where the page is writable, so that a store after a load to a new page
// stays in translated code (a loop over 32 pages, loading then storing
// each, leaves its code once per page, for the load's miss, not twice),
// but not where it is read-only: there the store still takes its
// permission fault, translated or not.
func TestReadFillGrantsStores(t *testing.T) {
	for _, mmu := range []bool{false, true} {
		for _, interpret := range []bool{false, true} {
			m, c, _ := newTestMachineWith(t, prog("ldr x3, [x2]", "str x3, [x2, #8]", "add x2, x2, #1, lsl #12",
				"subs x9, x9, #1", "b.ne #-16", "ldr x3, [x4]", "str x3, [x4]", "b #0"), Config{Interpret: interpret})
			ro := uint64(testData + 0x40000)
			if mmu {
				pt := newPageTables(t, m, 1)
				for a := uint64(RAMBase); a < testData+0x41000; a += PageSize {
					attrs := uint64(ptNormal)
					if a == ro {
						attrs |= ptAPRO
					}
					pt.page(a, a, attrs)
				}
				c.SetSysReg(MAIR_EL1, testMAIR)
				c.SetSysReg(TCR_EL1, tcr39)
				c.SetSysReg(TTBR0_EL1, pt.root)
				c.SetSysReg(SCTLR_EL1, testSCTLR|sctlrM)
			}
			c.SetX(2, testData+0x1000)
			c.SetX(4, ro)
			c.SetX(9, 32)
			if err := m.Step(1000); err != nil {
				t.Fatal(err)
			}
			st := m.Stats()
			if c.X(9) != 0 || !interpret && st.BlockEntries > 40 {
				t.Errorf("mmu %v, interpret %v: x9 = %d, %d entries into translated code for 32 pages", mmu, interpret, c.X(9), st.BlockEntries)
			}
			if esr := c.SysReg(ESR_EL1); mmu && (c.SysReg(FAR_EL1) != ro || esr>>26 != 0x25 || esr&(1<<6) == 0) {
				t.Errorf("interpret %v: the store to a read-only page: ESR %#x, FAR %#x", interpret, esr, c.SysReg(FAR_EL1))
			}
		}
	}
}

// TestTranslatedFlagsToBranch runs each A64 condition's B.cond right
// after each kind of flag setter (a subtraction, an addition, a logical
// operation; 64- and 32-bit), which translated code may branch on the
// x86 flags directly, in a loop whose operands vary, translated and
// interpreted, and requires the same count of branches taken.
func TestTranslatedFlagsToBranch(t *testing.T) {
	branches := []string{"b.eq #8", "b.ne #8", "b.hs #8", "b.lo #8", "b.mi #8", "b.pl #8", "b.vs #8", "b.vc #8",
		"b.hi #8", "b.ls #8", "b.ge #8", "b.lt #8", "b.gt #8", "b.le #8"}
	for _, setter := range []string{"cmp x1, x2", "cmn x1, x2", "tst x1, x2", "cmp w1, w2", "cmn w1, #7", "subs w3, w1, w2", "ands x3, x1, x2"} {
		for _, insn := range branches {
			type result struct{ x5, nzcv, retired uint64 }
			run := func(interpret bool) result {
				m, c, _ := newTestMachineWith(t, prog(setter, insn, "add x5, x5, #1",
					"add x1, x1, x6", "add x2, x2, x7", "subs x9, x9, #1", "b.ne #-24", "b #0"), Config{Interpret: interpret})
				for r, v := range map[int]uint64{1: 0x7ffffffffffffff0, 2: 0x7ffffff0, 6: 0x9e3779b97f4a7c15,
					7: 0xc2b2ae3d27d4eb4f, 9: 300} {
					c.SetX(r, v)
				}
				if err := m.Step(3000); err != nil {
					t.Fatal(err)
				}
				return result{c.X(5), c.nzcv(), m.Stats().Instructions}
			}
			if want, got := run(true), run(false); got != want {
				t.Errorf("%s; %s: translated %+x, interpreted %+x", setter, insn, got, want)
			}
		}
	}
}

// TestTranslatedSPCheckAfterMove: translated code checks SP's alignment
// once, until an instruction moves SP by other than a multiple of 16.
// Each block misaligns SP that way before an access through it: warm
// with SCTLR_EL1.SA clear (the access bails to the interpreter, which
// allows it), then with SA set the access must take the SP alignment
// fault, translated as interpreted.
func TestTranslatedSPCheckAfterMove(t *testing.T) {
	for _, move := range []string{"add sp, sp, #8", "ldr x5, [sp], #8", "mov sp, x4"} {
		for _, interpret := range []bool{true, false} {
			m, c, _ := newTestMachineWith(t, prog(
				"str x1, [sp, #-16]!", // checks SP
				move,
				"ldr x0, [sp]",
				"mov sp, x6", // back
				"subs x2, x2, #1",
				"b.ne #-20",
				"b #0",
			), Config{Interpret: interpret})
			c.SetSysReg(SCTLR_EL1, c.SysReg(SCTLR_EL1)&^sctlrSA)
			sp := uint64(testData + 0x1000)
			c.SetSP(sp)
			c.SetX(4, sp-8)
			c.SetX(6, sp)
			c.SetX(2, 10)
			if err := m.Step(60); err != nil {
				t.Fatal(err)
			}
			if c.PC() != testCode+24 {
				t.Fatalf("%s: warm-up ended at pc %#x, ESR %#x", move, c.PC(), c.SysReg(ESR_EL1))
			}
			c.SetSysReg(SCTLR_EL1, c.SysReg(SCTLR_EL1)|sctlrSA)
			c.SetPC(testCode)
			c.SetX(2, 5)
			if err := m.Step(6); err != nil {
				t.Fatal(err)
			}
			if esr, elr := c.SysReg(ESR_EL1), c.SysReg(ELR_EL1); esr>>26 != ecSPAlign || elr != testCode+8 {
				t.Errorf("%s, interpret %v: ESR %#x ELR %#x, want the SP alignment fault at %#x", move, interpret, esr, elr, testCode+8)
			}
		}
	}
}

// exceptionState is what the exception tests compare, translated
// against interpreted: the registers, where the CPU is, the instructions
// retired, and the last exception's registers and the count.
type exceptionState struct {
	x                  [16]uint64
	pc, pstate, insns  uint64
	esr, elr, spsr, ex uint64
}

func exceptionStateOf(m *Machine, c *CPU) (s exceptionState) {
	for i := range s.x {
		s.x[i] = c.X(i)
	}
	s.pc, s.pstate, s.insns = c.PC(), c.PSTATE(), m.Stats().Instructions
	s.esr, s.elr, s.spsr, s.ex = c.SysReg(ESR_EL1), c.SysReg(ELR_EL1), c.SysReg(SPSR_EL1), m.Stats().Exceptions
	return s
}

// TestTranslatedExceptionEntryReturn runs a loop that takes a BRK to a
// handler that returns past it with ERET, as a kprobe hit does, with
// the exclusive monitor set across it: translated (BRK and ERET at EL1
// with SP_EL1 stay in translated code), and interpreted. Both must end
// in the same state; translated, the loop must not return to runFast
// each time. With SP_EL0 selected (EL1t), translated code leaves BRK
// and ERET to the interpreter.
func TestTranslatedExceptionEntryReturn(t *testing.T) {
	const vbar = testCode + 0x800
	handler := prog(
		"stxr w9, x3, [x8]", // fails: the exception cleared the monitor
		"add x13, x13, x9",
		"mrs x5, esr_el1", "mrs x6, elr_el1", "mrs x7, spsr_el1",
		"add x6, x6, #4", "msr elr_el1, x6",
		"add x11, x11, x5", "add x12, x12, x7",
		"cmp x5, #0", // flags for ERET to restore
		"eret",
	)
	for _, mode := range []uint64{5, 4} { // EL1h, EL1t
		run := func(interpret bool) (r exceptionState, entries uint64) {
			m, c, _ := newTestMachineWith(t, prog(
				"adds x1, x1, #1",
				"ldxr x3, [x8]",
				"brk #0x123",
				"cinc x14, x14, cs", // C as ERET restored it
				"stxr w4, x3, [x8]", // fails: the exception cleared the monitor
				"add x10, x10, x4",
				"subs x2, x2, #1",
				"b.ne #-28",
				"b #0",
			), Config{Interpret: interpret})
			for _, off := range []uint64{0, 0x200} {
				for i, w := range handler {
					mustWrite32(t, m, vbar+off+uint64(4*i), w)
				}
			}
			c.SetSysReg(VBAR_EL1, vbar)
			c.SetPSTATE(mode | 1<<30) // Z set, DAIF clear
			c.SetX(1, ^uint64(0)-50)  // so that ADDS sets C and Z on the way
			c.SetX(2, 200)
			c.SetX(8, testData)
			c.SetSP(testData + 0x1000)
			if err := m.Step(200 * 20); err != nil {
				t.Fatal(err)
			}
			return exceptionStateOf(m, c), m.Stats().BlockEntries
		}
		want, _ := run(true)
		got, entries := run(false)
		if want.pc != testCode+32 || want.x[2] != 0 || want.x[10] != 200 || want.x[13] != 200 || want.ex != 200 {
			t.Fatalf("mode %d: interpreted %+v: want the loop done, 400 failed STXRs, 200 exceptions", mode, want)
		}
		if got != want {
			t.Errorf("mode %d: translated %+v\ninterpreted %+v", mode, got, want)
		}
		if entries == 0 {
			t.Errorf("mode %d: Stats counted no entries into translated code", mode)
		}
		if mode == 5 && entries > 20 {
			t.Errorf("mode %d: %d entries into translated code for 200 exceptions", mode, entries)
		}
	}
}

// TestTranslatedSystemCall runs a loop at EL0 that makes a system call
// (SVC) to a handler at EL1 that returns with ERET, with the exclusive
// monitor set across it and a stack at each EL: translated (SVC at EL0
// and ERET to EL0 stay in translated code), and interpreted, with the
// MMU off and on (EL0's code and stack in pages EL0 may use, the
// handler in one it may not). Both must end in the same state, banked
// stack pointers included; translated, the loop must not return to
// runFast at each call.
func TestTranslatedSystemCall(t *testing.T) {
	const vbar = testCode + 0x1000
	const stack0, stack1 = testData + 0x2000, testData + 0x4000 // tops
	handler := prog(
		"stp x29, x30, [sp, #-32]!", // (SP_EL1 moves down 16 a call)
		"mrs x5, esr_el1", "mrs x6, elr_el1", "mrs x7, spsr_el1",
		"add x11, x11, x5", "add x12, x12, x7", "add x13, x13, x6",
		"mov x9, sp", "add x11, x11, x9",
		"cmp x5, #0", // flags for ERET to restore
		"ldp x29, x30, [sp], #16",
		"eret",
	)
	for _, mmu := range []bool{false, true} {
		type result struct {
			exceptionState
			sp0, sp1 uint64
		}
		run := func(interpret bool) (r result, entries uint64) {
			code := prog(
				"adds x1, x1, #1",
				"ldxr x3, [x8]",
				"stp x1, x2, [sp, #-32]!", // (SP_EL0 moves down 16 a call)
				"svc #0x42",
				"cinc x14, x14, cs", // C as ERET restored it
				"stxr w4, x3, [x8]", // fails: the exception cleared the monitor
				"add x10, x10, x4",
				"ldp x5, x6, [sp], #16",
				"add x15, x15, x5",
				"subs x2, x2, #1",
				"b.ne #-40",
				"b #0",
			)
			cfg := Config{Interpret: interpret}
			var m *Machine
			var c *CPU
			if mmu {
				var pt *pageTables
				m, c, pt = newMMUMachineWith(t, code, cfg)
				pt.page(testCode, testCode, ptNormal|ptAPEL0|ptAPRO)
				pt.page(testData, testData, ptNormal|ptAPEL0)
				pt.page(stack0-PageSize, stack0-PageSize, ptNormal|ptAPEL0)
			} else {
				m, c, _ = newTestMachineWith(t, code, cfg)
			}
			for i, w := range handler {
				mustWrite32(t, m, vbar+0x400+uint64(4*i), w)
			}
			c.SetSysReg(VBAR_EL1, vbar)
			c.SetSP(stack1)
			c.SetPSTATE(0 | 1<<30) // EL0t, Z set, DAIF clear
			c.SetSP(stack0)
			c.SetX(1, ^uint64(0)-50) // so that ADDS sets C and Z on the way
			c.SetX(2, 200)
			c.SetX(8, testData)
			if err := m.Step(200 * 25); err != nil {
				t.Fatal(err)
			}
			return result{exceptionStateOf(m, c), c.spEL0, c.spEL1}, m.Stats().BlockEntries
		}
		want, _ := run(true)
		got, entries := run(false)
		if want.pc != testCode+44 || want.x[2] != 0 || want.x[10] != 200 || want.ex != 200 || want.pstate&0xf != 0 || want.esr != 0x15<<26|1<<25|0x42 {
			t.Fatalf("mmu %v: interpreted %+v: want the loop done at EL0, 200 failed STXRs, 200 system calls", mmu, want)
		}
		if got != want {
			t.Errorf("mmu %v: translated %+v\ninterpreted %+v", mmu, got, want)
		}
		if entries == 0 || entries > 20 {
			t.Errorf("mmu %v: %d entries into translated code for 200 system calls", mmu, entries)
		}
	}
}

// TestTranslatedInterruptAtBranch raises the IRQ line (a hostcall, as a
// device would) in the middle of a hot loop, translated and chained: the
// loop's taken branch back, in translated code, must leave for the
// interrupt there, with the branch's target as the return address, as
// the interpreter takes it.
func TestTranslatedInterruptAtBranch(t *testing.T) {
	run := func(interpret bool) (elr, pc, x1, x2 uint64) {
		m, c, _ := newTestMachineWith(t, prog(
			"add x1, x1, #1",
			"cmp x1, x5",
			"b.ne #8",
			"hvc #0x4b01", // at the 100th iteration: the line goes up
			"add x2, x2, #1",
			"b #-20",
		), Config{Interpret: interpret})
		mustWrite32(t, m, testVBAR+0x280, I("b #0")) // the IRQ vector: stay
		c.SetPSTATE(0x345)                           // EL1h, IRQ unmasked
		c.SetX(5, 100)
		m.SetHostcall(0x4b01, func(cpu *CPU) error {
			cpu.setInterruptLines(true, false)
			return nil
		})
		if err := m.Step(1000); err != nil {
			t.Fatal(err)
		}
		return c.SysReg(ELR_EL1), c.PC(), c.X(1), c.X(2)
	}
	elr, pc, x1, x2 := run(true)
	if elr != testCode || pc != testVBAR+0x280 || x1 != 100 || x2 != 100 {
		t.Fatalf("interpreted: ELR %#x, x1 %d, x2 %d: want the interrupt at the loop's start after 100 iterations", elr, x1, x2)
	}
	gelr, gpc, gx1, gx2 := run(false)
	if gelr != elr || gpc != pc || gx1 != x1 || gx2 != x2 {
		t.Errorf("translated: ELR %#x pc %#x x1 %d x2 %d; interpreted: ELR %#x pc %#x x1 %d x2 %d", gelr, gpc, gx1, gx2, elr, pc, x1, x2)
	}
}

// TestJumpCacheWays: two pcs of one jump cache set both stay, and the
// entry noted longest ago goes when a third comes; translated code
// finds a block in either way. A loop calls two functions whose entry
// pcs share a set: warm, it must run in translated code from end to end
// (direct-mapped, each call missed on the other's entry), with the
// interpreter's results.
func TestJumpCacheWays(t *testing.T) {
	const f1 uint64 = testCode + 0x3040
	const f2 = f1 ^ (1<<2 | 1<<(jumpSetBits+2)) // testCode+0x1044
	if jumpSet(f1) != jumpSet(f2) || jumpSet(testCode+4) == jumpSet(f1) || jumpSet(testCode+8) == jumpSet(f1) {
		t.Fatalf("sets: f1 %d, f2 %d, returns %d %d", jumpSet(f1), jumpSet(f2), jumpSet(testCode+4), jumpSet(testCode+8))
	}

	var c CPU
	c.clearJumps()
	c.el = 1
	f3 := f1 ^ (1<<3 | 1<<(jumpSetBits+3))
	c.noteJump(f1, &block{chain: 0x1000})
	c.noteJump(f2, &block{chain: 0x2000})
	if !c.jumpHit(f1) || !c.jumpHit(f2) {
		t.Errorf("two pcs of one set: hits %v %v, want both", c.jumpHit(f1), c.jumpHit(f2))
	}
	c.noteJump(f3, &block{chain: 0x3000})
	if c.jumpHit(f1) || !c.jumpHit(f2) || !c.jumpHit(f3) {
		t.Errorf("a third: hits %v %v %v, want the first gone", c.jumpHit(f1), c.jumpHit(f2), c.jumpHit(f3))
	}

	type result struct{ x10, x11, pc, entries uint64 }
	run := func(interpret bool) result {
		m, c, _ := newTestMachineWith(t, prog("blr x1", "blr x2", "subs x3, x3, #1", "b.ne #-12", "b #0"), Config{Interpret: interpret})
		if !interpret && !m.jits[0].enabled() {
			t.Skip("no block translation on this host")
		}
		writeLeaf(t, m, f1, "add x10, x10, #1")
		writeLeaf(t, m, f2, "add x11, x11, #2")
		c.SetX(1, f1)
		c.SetX(2, f2)
		c.SetX(3, 20)
		if err := m.Step(20 * 8); err != nil {
			t.Fatal(err)
		}
		c.SetPC(testCode)
		c.SetX(3, 300)
		entries := m.Stats().BlockEntries
		if err := m.Step(300*8 + 10); err != nil {
			t.Fatal(err)
		}
		return result{c.X(10), c.X(11), c.PC(), m.Stats().BlockEntries - entries}
	}
	want, got := run(true), run(false)
	if want.x10 != 320 || want.x11 != 640 || want.pc != testCode+16 {
		t.Fatalf("interpreted: %+v, want 320 and 640 calls' sums, at the end", want)
	}
	if got.x10 != want.x10 || got.x11 != want.x11 || got.pc != want.pc {
		t.Errorf("translated %+v, interpreted %+v", got, want)
	}
	if got.entries >= 10 {
		t.Errorf("%d entries into translated code for 600 calls to two functions of one set", got.entries)
	}
}

// writeLeaf writes a leaf function at addr: insn, then RET.
func writeLeaf(t *testing.T, m *Machine, addr uint64, insn string) {
	t.Helper()
	mustWrite32(t, m, addr, I(insn))
	mustWrite32(t, m, addr+4, I("ret"))
}

// TestTranslatedAccessGroups runs, translated and interpreted, loops
// whose accesses through one base register share one micro-TLB check
// (jit_group_amd64.go): hot at an address where their bytes stay in one
// page, then where they cross into the next page (mapped elsewhere in
// RAM, read-only or not at all), where the base moves or is rewritten
// between them, or where they lie too far apart to share a check. The
// two must end in the same state.
func TestTranslatedAccessGroups(t *testing.T) {
	const va = 0x30000000
	const pa1, pa2, pa3 = testData + 0x1000, testData + 0x4000, testData + 0x6000 // not adjacent
	const end = va + PageSize                                                     // the first page's end
	tests := []struct {
		name string
		body []string // the loop's body
		hot  uint64   // x1 after the warm-up at va+0x800
		next uint64   // the second page's attributes; 0: unmapped
	}{
		{"crossing loads", []string{"ldr x0, [x1]", "ldr x4, [x1, #8]"}, end - 8, ptNormal},
		{"crossing loads/unmapped", []string{"ldr x0, [x1]", "ldr x4, [x1, #8]"}, end - 8, 0},
		{"crossing store", []string{"ldr x0, [x1]", "str x3, [x1, #8]"}, end - 8, ptNormal},
		{"crossing store/read-only", []string{"ldr x0, [x1]", "str x3, [x1, #8]"}, end - 8, ptNormal | ptAPRO},
		// (x6: the second page, read all along, in the micro-TLB for reads)
		{"load then store/read-only", []string{"ldr x5, [x6]", "ldr x0, [x1]", "add x0, x0, #1", "str x0, [x1]"}, end + 16, ptNormal | ptAPRO},
		{"post-index", []string{"ldr x0, [x1], #8", "ldr x4, [x1]", "sub x1, x1, #8"}, end - 8, ptNormal},
		{"pre-index pair", []string{"stp x2, x3, [x1, #-16]!", "ldp x4, x5, [x1, #16]", "add x1, x1, #16"}, end, ptNormal},
		{"added to base", []string{"ldr x0, [x1]", "add x1, x1, #8", "ldr x4, [x1]", "sub x1, x1, #8"}, end - 8, ptNormal},
		{"base rewritten", []string{"ldr x0, [x1]", "mov x1, x7", "ldr x4, [x1]", "mov x1, x8"}, va + 0x800, ptNormal},
		{"too far apart", []string{"ldr x0, [x1]", "ldr x4, [x1, #200]"}, end - 100, ptNormal},
		{"moving base", []string{"ldr x0, [x1]", "str x0, [x1, #8]", "add x1, x1, #16"}, va + 0x800, ptNormal},
		{"byte then word", []string{"ldrb w0, [x1, #7]", "ldr w4, [x1, #4]", "strh w3, [x1, #8]"}, end - 8, ptNormal},
		// A member that finds DX as its leader left it, and one after
		// MADD, whose translation uses DX: it needs the saved host.
		{"member after member", []string{"ldp x4, x5, [x1]", "ldr x0, [x1, #16]", "str x0, [x1, #24]"}, va + 0x800, ptNormal},
		{"member after madd", []string{"ldr x0, [x1]", "madd x4, x0, x3, x2", "ldr x5, [x1, #8]"}, va + 0x800, ptNormal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type result struct {
				x                         [10]uint64
				pc, esr, far, elr, retire uint64
				mem                       [12]uint64
			}
			run := func(interpret bool) result {
				n := len(tt.body) + 1
				back := map[int]string{3: "b #-8", 4: "b #-12", 5: "b #-16"}[n] // to the loop's start
				code := append(append([]string{}, tt.body...), back)
				m, c, pt := newMMUMachineWith(t, prog(code...), Config{Interpret: interpret})
				pt.page(va, pa1, ptNormal)
				if tt.next != 0 {
					pt.page(end, pa2, tt.next)
				}
				pt.page(va+0x10000, pa3, ptNormal)
				for i, p := range []uint64{pa1 + PageSize - 16, pa1 + PageSize, pa2, pa3} { // pa1+PageSize: what a wrong read finds
					mustWrite64(t, m, p, 0x1111111111111111*uint64(i+1))
					mustWrite64(t, m, p+8, 0x0101010101010101*uint64(i+1))
					mustWrite64(t, m, p+16, 0x1010101010101010*uint64(i+1))
				}
				c.SetX(1, va+0x800)
				c.SetX(2, 0x2222)
				c.SetX(3, 0x3333333355555555)
				c.SetX(6, end+32)
				c.SetX(7, va+0x10000)
				c.SetX(8, va+0x800)
				if err := m.Step(uint64(400 * n)); err != nil { // translated by now
					t.Fatal(err)
				}
				if tt.hot != va+0x800 {
					c.SetX(1, tt.hot)
					c.SetX(8, tt.hot)
				}
				if err := m.Step(uint64(3 * n)); err != nil {
					t.Fatal(err)
				}
				var r result
				for i := range r.x {
					r.x[i] = c.X(i)
				}
				r.pc, r.esr, r.far, r.elr, r.retire = c.PC(), c.SysReg(ESR_EL1), c.SysReg(FAR_EL1), c.SysReg(ELR_EL1), m.Stats().Instructions
				for i, p := range []uint64{pa1 + PageSize - 16, pa1 + PageSize, pa2, pa3} {
					for j := range 3 {
						r.mem[3*i+j] = mustRead64(t, m, p+8*uint64(j))
					}
				}
				return r
			}
			want, got := run(true), run(false)
			if got != want {
				t.Errorf("translated  %+x\ninterpreted %+x", got, want)
			}
		})
	}
}

// TestTranslatedGroupSnoop stores twice through one base register, the
// second store 64 bytes on, in a hot loop, while another CPU's monitor
// holds a granule only the second store reaches: the group's one snoop
// (jit_group_amd64.go) must cover both stores' bytes, so that the second
// clears the monitor as the interpreter's does.
func TestTranslatedGroupSnoop(t *testing.T) {
	const va = 0x30000000
	const pa = testData + 0x1000
	const granule = 0x840 // first reached by the second store, at x1 = va+0x800
	type result struct {
		valid           bool
		x1, x2, retired uint64
	}
	run := func(interpret bool) result {
		m, c, pt := newMMUMachineWith(t, prog("str x3, [x1]", "str x3, [x1, #64]", "add x1, x1, #8", "subs x2, x2, #1", "b.ne #-16", "b #0"), Config{Interpret: interpret, NumCPUs: 2})
		pt.page(va, pa, ptNormal)
		o := m.CPU(1)
		o.excValid, o.excAddr, o.excSize, o.excPA = true, va+granule, 3, pa+granule
		m.reservations++
		c.SetX(1, va)
		c.SetX(2, 0x300)
		c.SetX(3, 7)
		// Stop after the iteration at x1 = va+0x800, all of it
		// translated: the budget ends with it.
		if err := m.Step(5 * (0x800/8 + 1)); err != nil {
			t.Fatal(err)
		}
		if o.excValid {
			t.Errorf("interpret %v: monitor at %#x still valid after the store there", interpret, granule)
		}
		if err := m.Step(2000); err != nil {
			t.Fatal(err)
		}
		return result{o.excValid, c.X(1), c.X(2), m.Stats().Instructions}
	}
	if want, got := run(true), run(false); got != want {
		t.Errorf("translated %+v, interpreted %+v", got, want)
	}
}

// TestTranslatedSuperblock runs blocks that go on past conditional
// branches not taken (translate1's superblocks): a loop that branches
// back from the middle of its block, and a taken branch out of the
// middle with cached registers written before it, in slices of every
// length from 1 to 12 instructions, translated and interpreted. The two
// must agree after every slice: a slice's budget must hold all of a
// block that may run, whichever of its exits it leaves by.
func TestTranslatedSuperblock(t *testing.T) {
	code := prog(
		"add x1, x1, #1", // the loop's start
		"add x6, x6, x1",
		"subs x4, x4, #1",
		"b.ne #-12", // back from the middle of the block
		"add x5, x5, x1",
		"mov x4, #3",
		"tbnz x1, #2, #12", // out of the middle, taken every other pass
		"add x7, x7, x5",
		"cbz x2, #8",
		"add x3, x3, #1",
		"b #-40", // to the loop's start
	)
	type state struct {
		x        [8]uint64
		pc, nzcv uint64
		retired  uint64
	}
	for slice := uint64(1); slice <= 12; slice++ {
		run := func(interpret bool) []state {
			m, c, _ := newTestMachineWith(t, code, Config{Interpret: interpret})
			c.SetX(4, 3)
			var states []state
			for range 300 {
				if err := m.Step(slice); err != nil {
					t.Fatal(err)
				}
				var s state
				for i := range s.x {
					s.x[i] = c.X(i)
				}
				s.pc, s.nzcv, s.retired = c.PC(), c.PSTATE()>>28, m.Stats().Instructions
				states = append(states, s)
			}
			if !interpret && m.Stats().TranslatedBlocks == 0 {
				t.Errorf("slice %d: nothing translated", slice)
			}
			return states
		}
		want, got := run(true), run(false)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("slice %d, after %d slices: translated %+v\ninterpreted %+v", slice, i+1, got[i], want[i])
				break
			}
		}
	}
}
