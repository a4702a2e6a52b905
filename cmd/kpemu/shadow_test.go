package main

import (
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/shadow"
)

func TestShadowRequest(t *testing.T) {
	tests := []struct {
		in   shadow.Request
		want kernel.ShadowRequest
	}{
		{shadow.Request{Op: shadow.Fork, PID: 7, Child: 8, Comm: "sh", Flags: 0x4111}, kernel.ShadowRequest{Op: kernel.ShadowFork, PID: 7, Child: 8, Comm: "sh"}},
		{shadow.Request{Op: shadow.Adopt, Child: 7, Comm: "kpemu"}, kernel.ShadowRequest{Op: kernel.ShadowAdopt, Child: 7, Comm: "kpemu"}},
		{shadow.Request{Op: shadow.Exit, PID: 8, Comm: "sh", Flags: 0x0f00}, kernel.ShadowRequest{Op: kernel.ShadowExit, PID: 8, Comm: "sh", Flags: 0x0f00}},
		{shadow.Request{Op: shadow.Open, Comm: "sh", Path: "/dev/null", Flags: 0o1101, Mode: 0o666}, kernel.ShadowRequest{Op: kernel.ShadowOpen, Comm: "sh", Path: "/dev/null", Flags: 0o1101, Mode: 0o666}},
		{shadow.Request{Op: shadow.Symlink, Comm: "ln", Path: "/t/bar", Target: "foo"}, kernel.ShadowRequest{Op: kernel.ShadowSymlink, Comm: "ln", Path: "/t/bar", Target: "foo"}},
		{shadow.Request{Op: shadow.Mkdir, Comm: "mkdir", Path: "/t/d", Mode: 0o777}, kernel.ShadowRequest{Op: kernel.ShadowMkdir, Comm: "mkdir", Path: "/t/d", Mode: 0o777}},
		{shadow.Request{Op: shadow.Unlink, Comm: "rmdir", Path: "/t/d", Flags: 0x200}, kernel.ShadowRequest{Op: kernel.ShadowUnlink, Comm: "rmdir", Path: "/t/d", Flags: 0x200}},
	}
	for _, tt := range tests {
		if got := shadowRequest(tt.in); got != tt.want {
			t.Errorf("shadowRequest(%+v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
