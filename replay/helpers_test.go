package replay

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// update regenerates the committed captures and expected outputs under
// testdata/replay: go test ./replay -update
var update = flag.Bool("update", false, "regenerate testdata/replay (captures and expected outputs)")

// sharedDir is ../shared/captures beside the repository, from this package.
const sharedDir = "../../shared/captures"

// testdataDir holds the captures this project produced and their expected output.
const testdataDir = "../testdata/replay"

func sharedCapture(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(sharedDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared capture %s not available (%v): these tests read ../shared/captures beside the repository", p, err)
	}
	return p
}

func needTshark(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed; install the Debian package tshark for this cross-check")
	}
	return p
}

// tsharkTypes returns tshark's ISUP message type counts for a file.
func tsharkTypes(t testing.TB, path string, prefs ...string) map[int]int {
	t.Helper()
	bin := needTshark(t)
	args := []string{"-n", "-r", path, "-Y", "isup", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,", "-e", "isup.message_type"}
	for _, p := range prefs {
		args = append(args, "-o", p)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %v: %v\n%s", args, err, stderr.String())
	}
	counts := map[int]int{}
	for _, line := range strings.Fields(string(out)) {
		for _, f := range strings.Split(line, ",") {
			var n int
			for _, ch := range f {
				if ch < '0' || ch > '9' {
					t.Fatalf("tshark type %q", f)
				}
				n = n*10 + int(ch-'0')
			}
			counts[n]++
		}
	}
	return counts
}

// golden compares got with the file, or rewrites the file under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./replay -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %q\nwant: %q\n(run go test ./replay -update if the change is intended)", path, i+1, g, w)
			}
		}
	}
}
