// Command kpemu boots kpemu's emulated AArch64 kernel, implements Linux
// kprobes on it, and serves a debugfs tree (kprobes/, tracing/) over FUSE.
//
//	kpemu run --mount /tmp/dbg --probe vfs_read --probe do_fork
//	kpemu symbols vfs_
//	kpemu disasm vfs_read
//	kpemu explain r:vfs_read
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
		Use:           "kpemu",
		Short:         "An AArch64 system emulator for seeing and testing Linux kprobes",
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
	root.AddCommand(newRunCmd(), newSymbolsCmd(), newDisasmCmd(), newExplainCmd(), newUndefStatsCmd(), newShadowExecCmd())
	return root
}

// quietLogger is for commands whose output is their result: warnings only.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
