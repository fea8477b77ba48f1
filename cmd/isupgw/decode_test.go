package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp/capture"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// run executes the CLI with args and returns stdout, stderr and the error.
func run(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := execute(strings.NewReader(stdin), &out, &errOut, append([]string{"isupgw"}, args...))
	return out.String(), errOut.String(), err
}

func TestDecodeHex(t *testing.T) {
	out, _, err := run(t, "", "decode",
		"0100 01 00 6001 0A 00 02 07 05 83 10 21 43 05 0A 07 03 11 21 43 65 87 09 00",
		"23010C0204028 2AA2701 0200")
	if err != nil {
		t.Fatal(err)
	}
	want := "cic=1 IAM called=12345 called_nai=3 calling=1234567890 calling_nai=3 presentation=0 cpc=10 nci=00 fci=6001 tmr=0\n" +
		"cic=291 REL cause=42 location=2 acl=2\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestDecodeStdinANSI(t *testing.T) {
	in := "# an ANSI IAM (Dialogic trace) and a RLC without optional part\n" +
		"0100 01 00 2001 00 03 06 0E 03 90 90 A2 08 83 D0 66 09 19 32 54 0F 0A 07 03 93 59 24 63 79 87 00\n\n" +
		"FF3F10\n"
	out, _, err := run(t, in, "decode", "--variant", "ansi")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "called=6690912345F") || !strings.Contains(lines[0], "usi=9090a2") || lines[1] != "cic=16383 RLC" {
		t.Errorf("unexpected output:\n%s", out)
	}
}

func TestDecodeBadInput(t *testing.T) {
	cases := []struct {
		args    []string
		stdin   string
		wantErr string
		stderr  string
	}{
		{[]string{"decode", "zz"}, "", `"zz" is neither a file nor hex`, ""},
		{[]string{"decode", "--variant", "q767", "00"}, "", `unknown variant "q767"`, ""},
		{[]string{"decode", "01000C0200"}, "", "1 of 1 messages could not be decoded", "REL cause indicators at octet 3: pointer out of range"},
		{[]string{"decode"}, "0100 09 00\nxyz\n", "1 of 2 messages could not be decoded", "stdin line 2"},
		{[]string{"decode", "--udp-port", "70000", "00"}, "", "--udp-port 70000", ""},
	}
	for _, tc := range cases {
		_, stderr, err := run(t, tc.stdin, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.wantErr)
		}
		if !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, tc.stderr)
		}
	}
}

// exampleCall is the traffic of testdata/example-itu.pcap: a call that completes,
// a call refused under congestion (REL cause 42 with ACL), and circuit
// supervision.
func exampleCall(t *testing.T) []struct {
	fromA bool
	msg   isup.Message
} {
	cdpn, err := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	if err != nil {
		t.Fatal(err)
	}
	cgpn, err := isup.NewCallingPartyNumber(isup.NAINational, isup.NPIISDN, "4940987654")
	if err != nil {
		t.Fatal(err)
	}
	var opt isup.Optional
	if err := opt.Set(cgpn); err != nil {
		t.Fatal(err)
	}
	iam := func(cic uint16) isup.Message {
		return &isup.InitialAddress{Circuit: isup.Circuit{CIC: cic}, ForwardCall: isup.NewForwardCallIndicators(true, isup.ISUPPreferred, true),
			CallingPartyCategory: isup.CategoryOrdinary, TransmissionMedium: isup.TMR3k1Audio, CalledParty: cdpn, Optional: opt}
	}
	rel := func(cic uint16, cause uint8, acl isup.AutomaticCongestionLevel) isup.Message {
		m := &isup.Release{Circuit: isup.Circuit{CIC: cic}, Cause: isup.NewCause(isup.LocationPublicLocal, cause)}
		if acl != 0 {
			if err := m.Optional.Set(acl); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	return []struct {
		fromA bool
		msg   isup.Message
	}{
		{true, &isup.GroupReset{Kind: isup.GRS, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 30}}},
		{false, &isup.GroupReset{Kind: isup.GRA, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.NewRangeAndStatus(30, true)}},
		{true, iam(1)},
		{false, &isup.AddressComplete{Circuit: isup.Circuit{CIC: 1}, BackwardCall: isup.NewBackwardCallIndicators(2, 1, 1, true)}},
		{false, &isup.CallProgress{Circuit: isup.Circuit{CIC: 1}, Event: isup.NewEventInformation(isup.EventInBandInfo, false)}},
		{false, &isup.Answer{Circuit: isup.Circuit{CIC: 1}}},
		{true, iam(3)},
		{false, rel(3, isup.CauseSwitchingCongestion, 1)},
		{true, &isup.ReleaseComplete{Circuit: isup.Circuit{CIC: 3}}},
		{true, rel(1, isup.CauseNormalClearing, 0)},
		{false, &isup.ReleaseComplete{Circuit: isup.Circuit{CIC: 1}}},
		{false, &isup.GroupSupervision{Kind: isup.CGB, Circuit: isup.Circuit{CIC: 17}, RangeAndStatus: isup.RangeAndStatus{Range: 7, Status: []byte{0x0f}}}},
		{true, &isup.GroupSupervision{Kind: isup.CGBA, Circuit: isup.Circuit{CIC: 17}, RangeAndStatus: isup.RangeAndStatus{Range: 7, Status: []byte{0x0f}}}},
	}
}

// writeExample writes the example traffic as M3UA DATA between point codes 1 and 2.
func writeExample(t *testing.T, path string, opts ...capture.Option) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewWriter(f, opts...)
	if err != nil {
		t.Fatal(err)
	}
	a, b := netip.MustParseAddrPort("127.0.0.1:2905"), netip.MustParseAddrPort("127.0.0.2:2905")
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i, step := range exampleCall(t) {
		payload, err := isup.Marshal(step.msg, isup.ITU)
		if err != nil {
			t.Fatal(err)
		}
		src, dst, opc, dpc := a, b, uint32(1), uint32(2)
		if !step.fromA {
			src, dst, opc, dpc = b, a, 2, 1
		}
		data := capture.DataMessage(opc, dpc, 5, 2, 0, uint8(step.msg.CircuitID()%16), payload)
		if err := w.WriteM3UA(start.Add(time.Duration(i)*150*time.Millisecond), src, dst, 1+uint16(step.msg.CircuitID()%15), data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestExampleCapture checks the example that README's first command decodes: the
// committed pcap is what the encoder produces today, and decoding it gives the
// committed text. Run with -update to rewrite both.
func TestExampleCapture(t *testing.T) {
	pcap := filepath.Join("..", "..", "testdata", "example-itu.pcap")
	golden := filepath.Join("..", "..", "testdata", "example-itu.decode.txt")
	fresh := filepath.Join(t.TempDir(), "example.pcap")
	writeExample(t, fresh)
	if *update {
		data, err := os.ReadFile(fresh)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pcap, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(pcap)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/isupgw -run ExampleCapture -update)", err)
	}
	if now, _ := os.ReadFile(fresh); !bytes.Equal(now, committed) {
		t.Errorf("%s differs from what the encoder writes now; rerun with -update and review the diff", pcap)
	}
	out, _, err := run(t, "", "decode", pcap)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("decode output differs from %s:\n%s", golden, out)
	}
	if n := strings.Count(out, "\n"); n != len(exampleCall(t)) {
		t.Errorf("%d lines for %d messages", n, len(exampleCall(t)))
	}

	// The same traffic carried as SCTP over UDP (RFC 6951, port 9899) decodes the same.
	udp := filepath.Join(t.TempDir(), "example-udp.pcap")
	writeExample(t, udp, capture.WithSCTPOverUDP(9899))
	outUDP, _, err := run(t, "", "decode", udp)
	if err != nil || outUDP != out {
		t.Errorf("SCTP over UDP decodes differently (%v):\n%s", err, outUDP)
	}
}

func TestDecodeSharedCaptureJSON(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "captures", "m3ua_isup.cap")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared capture absent (%v): ../shared/captures is not beside the repository", err)
	}
	out, _, err := run(t, "", "decode", "--json", path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			Type string         `json:"type"`
			OPC  *uint32        `json:"opc"`
			Hex  string         `json:"hex"`
			F    map[string]any `json:"fields"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad JSON line %q: %v", line, err)
		}
		if m.OPC == nil || m.Hex == "" {
			t.Fatalf("line lacks routing label or hex: %s", line)
		}
		counts[m.Type]++
	}
	// 94 calls: IAM, ACM, ANM, REL, RLC each (tshark counts the same).
	for _, typ := range []string{"IAM", "ACM", "ANM", "REL", "RLC"} {
		if counts[typ] != 94 {
			t.Errorf("%s: %d messages, want 94", typ, counts[typ])
		}
	}
}

// A capture without ISUP (BICC, SCCP) is not decoded into silence: decode
// says what it holds and fails.
func TestDecodeCaptureWithoutISUP(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"bicc.pcap", []string{"no ISUP messages (service indicator 5) in 1 frames", "M3UA: 1 message", "service indicator 13 (BICC): 1 message"}},
		{"centile_m3ua.cap", []string{"service indicator 3 (SCCP): 1 message", "M3UA ASP state maintenance (ASPSM): 2 messages"}},
	} {
		path := filepath.Join("..", "..", "..", "shared", "captures", tc.file)
		if _, err := os.Stat(path); err != nil {
			t.Skipf("shared capture absent (%v): ../shared/captures is not beside the repository", err)
		}
		out, stderr, err := run(t, "", "decode", path)
		if err == nil || err.Error() != "decode: "+path+": no ISUP messages" || exitStatus(err) != 1 {
			t.Errorf("%s: err %v, want no ISUP messages (status 1)", tc.file, err)
		}
		if out != "" {
			t.Errorf("%s: printed %q", tc.file, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.file, w, stderr)
			}
		}
	}
}

func TestServiceIndicatorNames(t *testing.T) {
	for si, want := range map[uint8]string{0: "signalling network management", 3: "SCCP", 5: "ISUP", 13: "BICC", 11: "spare", 15: "spare"} {
		if got := serviceIndicator(si); got != want {
			t.Errorf("SI %d: %q, want %q", si, got, want)
		}
	}
}
