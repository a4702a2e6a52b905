package machine

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRunFastIsNotBig: past 5,000 nodes Go's inliner treats a function as
// big and inlines only the smallest calls into it, so runFast would call
// pollIRQ, pollTLB and the translated blocks' link instead of inlining
// them: about 10% of CoreMark. Adding a hot instruction to a64.decode, or
// a heavier one, can cross that line; this says so at once.
func TestRunFastIsNotBig(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to ask the compiler")
	}
	out, err := exec.Command(goTool, "build", "-gcflags=-m=2", "-o", "/dev/null", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "runFast considered 'big'") {
			t.Errorf("%s\n(make fewer instructions hot in a64.decode, or lighten their execute functions)", l)
		}
	}
}
