package main

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/arch/arm64/arm64asm"

	"github.com/kpemu/kpemu/kernel"
)

func newSymbolsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "symbols [SUBSTRING]",
		Short: "List the kernel image's symbols in /proc/kallsyms format",
		Long: `List the embedded kernel image's symbols (kallsyms) as /proc/kallsyms
prints them: address, type, name, one a line, in address order; with
SUBSTRING, only the names that contain it. Only the kernel's own symbols:
no module is loaded here. A running kpemu's kpemu/kallsyms also lists
its loaded modules' symbols ("addr t name\t[mod]").`,
		Example: `  kpemu symbols vfs_
  kpemu symbols | grep ' T ' | wc -l`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := kernel.Boot(kernel.Config{})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, s := range k.Kallsyms().Symbols() {
				if len(args) == 1 && !strings.Contains(s.Name, args[0]) {
					continue
				}
				fmt.Fprintf(out, "%016x %c %s\n", s.Addr, s.Type, s.Name)
			}
			return nil
		},
	}
}

// arm64asmMu serialises arm64asm, which is not safe for concurrent use.
type disassembler struct {
	mu sync.Mutex
}

func (d *disassembler) gnu(word uint32, pc uint64, k *kernel.Kernel) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := []byte{byte(word), byte(word >> 8), byte(word >> 16), byte(word >> 24)}
	inst, err := arm64asm.Decode(b)
	if err != nil {
		return fmt.Sprintf(".inst\t0x%08x", word)
	}
	text := arm64asm.GNUSyntax(inst)
	// Branch and adr targets as objdump prints them: absolute, symbolised.
	for _, a := range inst.Args {
		if rel, ok := a.(arm64asm.PCRel); ok {
			t := uint64(int64(pc) + int64(rel))
			text = pcRelText.ReplaceAllString(text, fmt.Sprintf("%#x <%s>", t, k.Kallsyms().Format(t)))
		}
	}
	return text
}

// pcRelText matches how arm64asm's GNU syntax prints a PC-relative operand.
var pcRelText = regexp.MustCompile(`\.[+-]0x[0-9a-f]+`)

func newDisasmCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "disasm SYMBOL",
		Short: "Disassemble a kernel function (GNU syntax)",
		Long: `Disassemble a function of the embedded kernel image, as objdump -d prints
it: address, instruction word and GNU syntax, with branch and adr targets
absolute and symbolised. The words are the image's as booted, before any
probe: a traceable function opens with "mov x9, x30; nop", the call site
the function tracer patches (see docs/files.md). SYMBOL is a kernel symbol
as "kpemu symbols" lists it. MOD:SYM (a module's symbol) does not work
here: disasm loads no module, and says "no symbol". "kpemu explain
MOD:SYM" loads the module and shows the probed instruction.`,
		Example: `  kpemu disasm vfs_read
  kpemu disasm kernel_clone | grep bl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := kernel.Boot(kernel.Config{})
			if err != nil {
				return err
			}
			s, ok := k.Kallsyms().LookupName(args[0])
			if !ok {
				return fmt.Errorf("no symbol %q", args[0])
			}
			var d disassembler
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%016x <%s>:\n", s.Addr, s.Name)
			for a := s.Addr; a < s.Addr+s.Size; a += 4 {
				w, err := k.ReadInsn(a)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "  %x:\t%08x\t%s\n", a, w, d.gnu(w, a, k))
			}
			return nil
		},
	}
}
