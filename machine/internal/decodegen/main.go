// Command decodegen generates machine's A64 decoder, its dispatch to the
// execute functions and its translator dispatch from one table of
// instruction patterns (machine/a64.decode), as QEMU's decodetree does
// for target/arm.
//
// Usage (from machine/, through go generate):
//
//	go run ./internal/decodegen a64.decode a64_decode.go a64_jit_amd64.go exec.go
//
// The last file holds the interpreter loop, whose marked region gets the
// dispatch of the hot instructions (splice.go).
// The table's format is described at the top of a64.decode; parse.go
// reads it and gen.go writes the Go.
package main

import (
	"fmt"
	"log/slog"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		slog.Error("decodegen", "err", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("usage: decodegen TABLE DECODER.go JIT.go LOOP.go")
	}
	src, err := os.ReadFile(args[0])
	if err != nil {
		return fmt.Errorf("read table: %w", err)
	}
	t, err := Parse(args[0], string(src))
	if err != nil {
		return err
	}
	dec, err := t.Decoder()
	if err != nil {
		return err
	}
	jit, err := t.JIT()
	if err != nil {
		return err
	}
	loop, err := t.Dispatch(args[3])
	if err != nil {
		return err
	}
	if err := os.WriteFile(args[3], loop, 0o644); err != nil {
		return fmt.Errorf("write interpreter loop: %w", err)
	}
	if err := os.WriteFile(args[1], dec, 0o644); err != nil {
		return fmt.Errorf("write decoder: %w", err)
	}
	if err := os.WriteFile(args[2], jit, 0o644); err != nil {
		return fmt.Errorf("write translator dispatch: %w", err)
	}
	return nil
}
