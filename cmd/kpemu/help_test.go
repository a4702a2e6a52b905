package main

import "testing"

// TestHelp: every subcommand explains itself (Long) and shows how it is
// used (Example), so that "kpemu help CMD" is enough to start with it.
func TestHelp(t *testing.T) {
	root := newRootCmd()
	if root.Long == "" {
		t.Error("kpemu has no Long help")
	}
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Long == "" {
			t.Errorf("%s has no Long help", c.Name())
		}
		if c.Example == "" {
			t.Errorf("%s has no Example", c.Name())
		}
	}
}

// TestBaremetalAlias: scripts that still say undefined-stats run the same
// command.
func TestBaremetalAlias(t *testing.T) {
	c, _, err := newRootCmd().Find([]string{"undefined-stats"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "baremetal" {
		t.Errorf("undefined-stats runs %q, want baremetal", c.Name())
	}
}
