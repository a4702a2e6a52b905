// Command kpemu boots kpemu's emulated AArch64 kernel, implements Linux
// kprobes on it, and serves a debugfs tree (kprobes/, tracing/) over FUSE.
//
//	kpemu run --mount /tmp/dbg --probe vfs_read --probe do_fork
//	kpemu symbols vfs_
//	kpemu disasm vfs_read
//	kpemu explain r:vfs_read
//	kpemu baremetal machine/testdata/coremark.elf
//	kpemu shadow-exec --socket PATH -- CMD
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "kpemu:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	var logLevel string
	root := &cobra.Command{
		Use:   "kpemu",
		Short: "An AArch64 system emulator for seeing and testing Linux kprobes",
		Long: `kpemu boots a small AArch64 kernel, laid out like Linux 6.1 arm64, on an
emulated machine, implements Linux kprobes, jprobes and kretprobes on it as
arm64 Linux does (a BRK patched into kernel text, the debug exception, the
step out of line), and serves its debugfs (kprobes/, tracing/) over FUSE.

Start with "kpemu run --mount /tmp/dbg" (or "make run"), then cat and echo
the files under /tmp/dbg as on a Linux box.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))
			return nil
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.AddCommand(newRunCmd(), newSymbolsCmd(), newUsymbolsCmd(), newDisasmCmd(), newExplainCmd(), newBaremetalCmd(), newShadowExecCmd())
	return root
}

// quietLogger is for commands whose output is their result: warnings only.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
