package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kpemu/kpemu/machine"
)

// newBaremetalCmd runs a bare-metal AArch64 ELF image on the machine alone
// (no kernel, no probes) for a number of instructions and prints the
// undefined-instruction exceptions it took, per mnemonic: which
// unimplemented instructions a guest needs. It was "undefined-stats",
// still accepted as an alias for scripts that use that name.
func newBaremetalCmd() *cobra.Command {
	var steps uint64
	var console, interpret bool
	cmd := &cobra.Command{
		Use:     "baremetal ELF",
		Aliases: []string{"undefined-stats"},
		Short:   "Run a bare-metal AArch64 ELF on the machine alone and count its undefined instructions",
		Long: `Run a bare-metal AArch64 ELF image on kpemu's machine alone: no kernel, no
probes, no mount. Its PT_LOAD segments are copied to their physical
addresses in guest RAM (at 0x40000000 on QEMU's virt memory map, 128 MiB),
its one CPU starts at the entry point at EL1, and it runs until it powers off
(PSCI SYSTEM_OFF) or has retired -n instructions. Then it prints the
instructions retired, the undefined-instruction exceptions taken, and
those exceptions by mnemonic: which instructions the machine does not
implement yet. This is how the same image runs on kpemu and on
qemu-system-aarch64 -M virt (scripts/bench-vs-qemu.sh), and how a new
guest's missing instructions are found. The images in machine/testdata
(coremark.elf and the CPU tests) are committed; "make image" rebuilds them.`,
		Example: `  kpemu baremetal --console -n 1000000000 machine/testdata/coremark.elf
  kpemu baremetal --interpret -n 1000000 machine/testdata/coremark.elf`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var uart bytes.Buffer
			m, err := machine.New(machine.Config{Console: &uart, Logger: quietLogger(), Interpret: interpret})
			if err != nil {
				return err
			}
			entry, err := loadBareELF(m, args[0])
			if err != nil {
				return err
			}
			m.Boot(entry, 0)
			if err := m.Step(steps); err != nil {
				return fmt.Errorf("running %s: %w", args[0], err)
			}
			out := cmd.OutOrStdout()
			if console {
				fmt.Fprintf(out, "%s", uart.Bytes())
			}
			return writeUndefStats(out, m)
		},
	}
	cmd.Flags().Uint64VarP(&steps, "instructions", "n", 100_000_000, "instructions to run (fewer if the guest powers off)")
	cmd.Flags().BoolVar(&console, "console", false, "print the guest's UART output first")
	cmd.Flags().BoolVar(&interpret, "interpret", false, "interpret every instruction instead of translating blocks to host code")
	return cmd
}

// writeUndefStats prints the machine's statistics as a table.
func writeUndefStats(w io.Writer, m *machine.Machine) error {
	st := m.Stats()
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "instructions\t%d\n", st.Instructions)
	fmt.Fprintf(tw, "undefined\t%d\n", st.Undefined)
	fmt.Fprintf(tw, "\nMNEMONIC\tCOUNT\n")
	for _, u := range m.UndefinedStats() {
		fmt.Fprintf(tw, "%s\t%d\n", u.Mnemonic, u.Count)
	}
	return tw.Flush()
}

// loadBareELF copies the loadable segments of an AArch64 ELF image into
// guest memory at their physical addresses and returns the entry point.
func loadBareELF(m *machine.Machine, path string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, fmt.Errorf("baremetal: %w", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		return 0, fmt.Errorf("baremetal: %s: machine %v, want AArch64", path, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		data := make([]byte, p.Memsz)
		if _, err := io.ReadFull(p.Open(), data[:p.Filesz]); err != nil {
			return 0, fmt.Errorf("baremetal: %s: %w", path, err)
		}
		if err := m.WriteMem(p.Paddr, data); err != nil {
			return 0, fmt.Errorf("baremetal: %s: %w", path, err)
		}
	}
	return f.Entry, nil
}
