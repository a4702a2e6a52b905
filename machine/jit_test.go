package machine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// runWith boots the program on a deterministic machine configured as cfg
// and returns its UART output and the machine's counters.
func runWith(t *testing.T, path string, cfg Config, patch func(*Machine)) ([]byte, Stats) {
	t.Helper()
	var out bytes.Buffer
	cfg.Console, cfg.Logger = &out, slog.New(slog.DiscardHandler)
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	entry := loadELF(t, m, path)
	if patch != nil {
		patch(m)
	}
	m.Boot(entry, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !m.PoweredOff() {
		t.Fatalf("machine did not power off; output so far:\n%s", out.Bytes())
	}
	return out.Bytes(), m.Stats()
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
				m.jit.shrink(4096, 8192)
				if p.patch != nil {
					p.patch(m)
				}
			})
			if tinySt.TranslatedBlocks > 100 && tinySt.CodeCacheFlushes == 0 {
				t.Errorf("%d blocks translated into an 8 KiB code cache, and it never filled", tinySt.TranslatedBlocks)
			}
			for _, r := range []struct {
				name string
				out  []byte
				st   Stats
			}{{"translated", got, gotSt}, {"translated, tiny code cache", tiny, tinySt}} {
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
