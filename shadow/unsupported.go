//go:build !linux || !(amd64 || arm64)

package shadow

import "context"

// Install fails with ErrUnsupported on this host.
func Install() error { return ErrUnsupported }

// Attach fails with ErrUnsupported on this host.
func Attach(socketPath string) error { return ErrUnsupported }

// Trace fails with ErrUnsupported on this host.
func (s *Supervisor) Trace(ctx context.Context, pid int, attached func()) error {
	return ErrUnsupported
}

// Listen fails with ErrUnsupported on this host.
func (s *Supervisor) Listen(ctx context.Context, socketPath string) error { return ErrUnsupported }
