package machine

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// parseFDT reads a blob back into a map from "path:property" to value,
// checking the header and token structure on the way.
func parseFDT(t *testing.T, blob []byte) map[string][]byte {
	t.Helper()
	be := binary.BigEndian
	if len(blob) < fdtHeaderLen || be.Uint32(blob) != fdtMagic || int(be.Uint32(blob[4:])) != len(blob) {
		t.Fatalf("bad header")
	}
	structOff, stringsOff := be.Uint32(blob[8:]), be.Uint32(blob[12:])
	if be.Uint32(blob[20:]) != fdtVersion || be.Uint32(blob[24:]) != fdtLastComp {
		t.Fatalf("version %d/%d", be.Uint32(blob[20:]), be.Uint32(blob[24:]))
	}
	if int(stringsOff+be.Uint32(blob[32:])) != len(blob) || structOff+be.Uint32(blob[36:]) != stringsOff {
		t.Fatal("block sizes do not add up")
	}
	strs := blob[stringsOff:]
	props := make(map[string][]byte)
	var path []string
	p := blob[structOff:stringsOff]
	for len(p) >= 4 {
		tok := be.Uint32(p)
		p = p[4:]
		switch tok {
		case fdtBeginNode:
			n := bytes.IndexByte(p, 0)
			path = append(path, string(p[:n]))
			p = p[(n+4)&^3:]
		case fdtEndNode:
			path = path[:len(path)-1]
		case fdtProp:
			n, off := be.Uint32(p), be.Uint32(p[4:])
			name := string(strs[off : off+uint32(bytes.IndexByte(strs[off:], 0))])
			key := strings.Join(path, "/") + ":" + name
			if _, dup := props[key]; dup {
				t.Fatalf("duplicate property %s", key)
			}
			props[key] = p[8 : 8+n]
			p = p[(8+n+3)&^3:]
		case fdtEnd:
			if len(path) != 0 || len(p) != 0 {
				t.Fatalf("FDT_END inside a node or before the end")
			}
			return props
		default:
			t.Fatalf("bad token %#x", tok)
		}
	}
	t.Fatal("no FDT_END")
	return nil
}

func cellsOf(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return b
}

func TestDeviceTree(t *testing.T) {
	m, err := New(Config{RAMSize: 64 << 20, NumCPUs: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	props := parseFDT(t, m.DeviceTree())
	cases := []struct{ key, want string }{
		{":#address-cells", string(cellsOf(2))},
		{":interrupt-parent", string(cellsOf(phandleGIC))},
		{"/memory@40000000:reg", string(cellsOf(0, RAMBase, 0, 64<<20))},
		{"/memory@40000000:device_type", "memory\x00"},
		{"/cpus/cpu@1:reg", string(cellsOf(1))},
		{"/cpus/cpu@1:enable-method", "psci\x00"},
		{"/psci:compatible", "arm,psci-1.0\x00arm,psci-0.2\x00arm,psci\x00"},
		{"/psci:method", "hvc\x00"},
		{"/intc@8000000:compatible", "arm,cortex-a15-gic\x00"},
		{"/intc@8000000:reg", string(cellsOf(0, GICDBase, 0, 0x10000, 0, GICCBase, 0, 0x10000))},
		{"/intc@8000000:#interrupt-cells", string(cellsOf(3))},
		{"/intc@8000000:interrupt-controller", ""},
		{"/timer:interrupts", string(cellsOf(1, 13, 0x304, 1, 14, 0x304, 1, 11, 0x304, 1, 10, 0x304))},
		{"/pl011@9000000:interrupts", string(cellsOf(0, 1, 4))},
		{"/pl011@9000000:clocks", string(cellsOf(phandleClock, phandleClock))},
		{"/apb-pclk:clock-frequency", string(cellsOf(24000000))},
		{"/pl031@9010000:interrupts", string(cellsOf(0, 2, 4))},
		{"/pl031@9010000:compatible", "arm,pl031\x00arm,primecell\x00"},
		{"/chosen:stdout-path", "/pl011@9000000\x00"},
	}
	for _, tc := range cases {
		if got, ok := props[tc.key]; !ok || string(got) != tc.want {
			t.Errorf("%s = %q (present %v), want %q", tc.key, got, ok, tc.want)
		}
	}
	addr, err := m.LoadDeviceTree()
	if err != nil {
		t.Fatal(err)
	}
	if addr != RAMBase+62<<20 {
		t.Errorf("placed at %#x", addr)
	}
	if magic, _ := m.Read32(addr); magic != 0xedfe0dd0 { // big-endian magic read little-endian
		t.Errorf("magic in RAM %#x", magic)
	}
}

// TestDeviceTreeDTC decompiles the blob with dtc (Debian package
// device-tree-compiler, which make deps installs), which checks it
// independently. It skips when dtc is missing, unless CI is set.
func TestDeviceTreeDTC(t *testing.T) {
	dtc, err := exec.LookPath("dtc")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("dtc not installed: CI must install device-tree-compiler")
		}
		t.Skip("dtc not installed (Debian package device-tree-compiler)")
	}
	m, err := New(Config{RAMSize: testRAM, NumCPUs: 4, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "virt.dtb")
	if err := os.WriteFile(path, m.DeviceTree(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(dtc, "-I", "dtb", "-O", "dts", path).CombinedOutput()
	if err != nil {
		t.Fatalf("dtc: %v\n%s", err, out)
	}
	for _, want := range []string{`compatible = "arm,cortex-a15-gic";`, `enable-method = "psci";`, `cpu@3 {`, `stdout-path = "/pl011@9000000";`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("dtc output lacks %q:\n%s", want, out)
		}
	}
	if bytes.Contains(out, []byte("Warning")) {
		t.Errorf("dtc warns:\n%s", out)
	}
}
