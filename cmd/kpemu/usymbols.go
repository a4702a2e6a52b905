package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/image"
)

func newUsymbolsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "usymbols PATH [SUBSTRING]",
		Short: "List a guest program's functions with their file offsets, for uprobe_events",
		Long: `List the function symbols of the guest program PATH (/bin/sh, /bin/cron,
/bin/sshd, /bin/lockd, /init, /bin/shadowd, ...: the initramfs's programs,
read from the embedded image, no boot needed) as "OFFSET ADDRESS NAME", one a
line in address order; with SUBSTRING, only the names that contain it.
OFFSET is the symbol's offset in the file, which is what uprobe_events
wants (p:EVENT PATH:OFFSET), as readelf's address minus its segment's
address plus the segment's file offset. kpemu's guest programs are not on
the host's disk; this is the objdump and readelf of perf-tools' uprobe.`,
		Example: `  kpemu usymbols /bin/sh open
  echo "p:sh_open /bin/sh:$(kpemu usymbols /bin/sh open | awk '$3 == "open" { print $1 }') path=+0(%x0):string" >> /sys/kernel/tracing/uprobe_events`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := kernel.InitramfsFile(image.ELF(), args[0])
			if err != nil {
				return err
			}
			f, err := elf.NewFile(bytes.NewReader(b))
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			syms, err := f.Symbols()
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			sort.SliceStable(syms, func(i, j int) bool { return syms[i].Value < syms[j].Value })
			out := cmd.OutOrStdout()
			for _, s := range syms {
				if elf.ST_TYPE(s.Info) != elf.STT_FUNC || len(args) == 2 && !strings.Contains(s.Name, args[1]) {
					continue
				}
				for _, p := range f.Progs {
					if p.Type == elf.PT_LOAD && s.Value >= p.Vaddr && s.Value < p.Vaddr+p.Filesz {
						fmt.Fprintf(out, "%#x %#x %s\n", s.Value-p.Vaddr+p.Off, s.Value, s.Name)
						break
					}
				}
			}
			return nil
		},
	}
}
