package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/isup"
)

// render is what `isupgw replay` prints for a capture: flow, blank line,
// summary; and what `isupgw replay --check` prints.
func render(t testing.TB, c *Capture, v isup.Variant) (flow, check string) {
	t.Helper()
	a, calls := Analyze(c, v)
	r := a.Report()
	var f, k bytes.Buffer
	if err := WriteFlow(&f, c.Msgs, calls); err != nil {
		t.Fatal(err)
	}
	f.WriteByte('\n')
	if err := WriteSummary(&f, c, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteCheck(&k, c, r); err != nil {
		t.Fatal(err)
	}
	return f.String(), k.String()
}

// TestSharedM3UAISUP: m3ua_isup.cap holds 94 calls; every one is seen,
// answered and released with cause 16, with no anomaly, and the count of each
// message type is tshark's.
func TestSharedM3UAISUP(t *testing.T) {
	path := sharedCapture(t, "m3ua_isup.cap")
	c, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Analyze(c, isup.ITU)
	r := a.Report()
	if len(r.Calls) != 94 || r.Answered != 94 || r.Unanswered != 0 || r.InProgress != 0 || r.Partial != 0 || len(r.Violations) != 0 {
		t.Fatalf("calls %d answered %d unanswered %d in progress %d partial %d violations %v",
			len(r.Calls), r.Answered, r.Unanswered, r.InProgress, r.Partial, r.Violations)
	}
	if len(r.ByCause) != 1 || r.ByCause[0] != (CauseCount{16, 94}) {
		t.Errorf("causes %v", r.ByCause)
	}
	for _, cl := range r.Calls {
		if cl.Messages != 5 || cl.OPC != 1 || cl.DPC != 2 || cl.End != EndReleased {
			t.Errorf("call %+v", *cl)
		}
	}
	want := tsharkTypes(t, path)
	if len(r.ByType) != len(want) {
		t.Errorf("types %v, tshark %v", r.ByType, want)
	}
	for _, tc := range r.ByType {
		if want[int(tc.Type)] != tc.Count {
			t.Errorf("%s: %d, tshark %d", tc.Type, tc.Count, want[int(tc.Type)])
		}
	}
}

// TestSharedM2PAISUP: m2pa_isup_itu.pcap (another stack's M2PA link) holds a
// circuit reset and 40 answered calls released with cause 16, with no
// anomaly; the count of each message type is tshark's.
func TestSharedM2PAISUP(t *testing.T) {
	path := sharedCapture(t, "m2pa_isup_itu.pcap")
	c, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Analyze(c, isup.ITU)
	r := a.Report()
	if len(r.Calls) != 40 || r.Answered != 40 || r.InProgress != 0 || r.Partial != 0 || len(r.Violations) != 0 {
		t.Fatalf("calls %d answered %d in progress %d partial %d violations %v",
			len(r.Calls), r.Answered, r.InProgress, r.Partial, r.Violations)
	}
	if len(r.ByCause) != 1 || r.ByCause[0] != (CauseCount{16, 40}) {
		t.Errorf("causes %v", r.ByCause)
	}
	want := tsharkTypes(t, path)
	if len(r.ByType) != len(want) {
		t.Errorf("types %v, tshark %v", r.ByType, want)
	}
	for _, tc := range r.ByType {
		if want[int(tc.Type)] != tc.Count {
			t.Errorf("%s: %d, tshark %d", tc.Type, tc.Count, want[int(tc.Type)])
		}
	}
}

// TestSharedISUPCap: isup.cap (draft M3UA framing) is one answered call with
// a CFN (cause 99) at frame 2; tshark agrees on the types when told the draft.
func TestSharedISUPCap(t *testing.T) {
	path := sharedCapture(t, "isup.cap")
	c, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Analyze(c, isup.ITU)
	r := a.Report()
	if len(r.Calls) != 1 || r.Answered != 1 || len(r.Violations) != 0 || len(r.Confusion) != 1 || r.Confusion[0].Frame != 2 {
		t.Fatalf("calls %d answered %d violations %v confusion %v", len(r.Calls), r.Answered, r.Violations, r.Confusion)
	}
	if cfn := r.Confusion[0].Msg.(*isup.Confusion); cfn.Cause.Value != isup.CauseParameterNonExistent {
		t.Errorf("CFN cause %d", cfn.Cause.Value)
	}
	if cl := r.Calls[0]; cl.CIC != 213 || cl.OPC != 11522 || cl.Messages != 6 || cl.Called != "4891F" {
		t.Errorf("call %+v", *cl)
	}
	want := tsharkTypes(t, path, "m3ua.version:Internet Draft version 6")
	for _, tc := range r.ByType {
		if want[int(tc.Type)] != tc.Count {
			t.Errorf("%s: %d, tshark %d", tc.Type, tc.Count, want[int(tc.Type)])
		}
	}
	if len(want) != len(r.ByType) {
		t.Errorf("tshark %v, ours %v", want, r.ByType)
	}
}

// TestSharedGolden runs every capture of ../shared/captures through the
// flow, summary and check outputs and compares them with the expected
// outputs committed under testdata/replay/shared (the captures themselves
// are never copied into the repository).
func TestSharedGolden(t *testing.T) {
	if _, err := os.Stat(sharedDir); err != nil {
		t.Skipf("%s not available (%v): these tests read ../shared/captures beside the repository", sharedDir, err)
	}
	files, err := os.ReadDir(sharedDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		name := f.Name()
		if f.IsDir() || !(strings.HasSuffix(name, ".cap") || strings.HasSuffix(name, ".pcap") || strings.HasSuffix(name, ".pcapng")) {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			c, err := Load(filepath.Join(sharedDir, name), Options{})
			if err != nil {
				t.Fatal(err)
			}
			c.File = name
			flow, check := render(t, c, isup.ITU)
			golden(t, filepath.Join(testdataDir, "shared", name+".golden"), []byte(flow))
			golden(t, filepath.Join(testdataDir, "shared", name+".check.golden"), []byte(check))
		})
	}
	if n == 0 {
		t.Skipf("no captures in %s", sharedDir)
	}
}
