package main

import (
	"context"
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/isupgw/isupgw/replay"
)

// replayData is the project's own captures with their expected outputs.
const replayData = "../../testdata/replay"

// TestReplayCommandOutputs: the command prints exactly the committed flow
// and summary, and --check the committed verdict, for captures in several
// link types; --check fails on the capture with violations and names the
// frames.
func TestReplayCommandOutputs(t *testing.T) {
	for _, name := range []string{"sll.pcap", "mtp2.pcap", "mtp3.pcap", "sctp-over-udp.pcap", "gateways.pcap"} {
		path := filepath.Join(replayData, name)
		out, stderr, err := run(t, "", "replay", path)
		if err != nil {
			t.Fatalf("%s: %v %s", name, err, stderr)
		}
		want, err := os.ReadFile(path + ".golden")
		if err != nil {
			t.Fatal(err)
		}
		// The golden files name the capture by its base name.
		if got := strings.Replace(out, "summary of "+path, "summary of "+name, 1); got != string(want) {
			t.Errorf("%s: output differs from %s.golden:\n%s", name, path, got)
		}
		out, _, err = run(t, "", "replay", "--check", path)
		if err != nil || !strings.HasSuffix(out, " 0 violations\n") {
			t.Errorf("%s --check: %v\n%s", name, err, out)
		}
	}
	out, _, err := run(t, "", "replay", "--variant", "ansi", "--no-flow", filepath.Join(replayData, "mtp3-ansi.pcap"))
	if err != nil || !strings.Contains(out, "calls         2: 2 answered") || strings.Contains(out, "cic=") {
		t.Errorf("ansi: %v\n%s", err, out)
	}
	out, _, err = run(t, "", "replay", "--check", filepath.Join(replayData, "violations.pcap"))
	if err == nil || !strings.Contains(err.Error(), "10 procedure violations") {
		t.Errorf("--check on violations.pcap: %v", err)
	}
	for _, want := range []string{"frame 3 2>1 cic=1 ACM: second ACM", "frame 8 2>1 cic=2 IAM: dual seizure", "frame 14 1>2 cic=3 IAM: IAM before the RLC"} {
		if !strings.Contains(out, want) {
			t.Errorf("--check output lacks %q:\n%s", want, out)
		}
	}
}

// TestReplaySharedCaptures: the command on m3ua_isup.cap reports 94 calls,
// on isup.cap the single call with its CFN.
func TestReplaySharedCaptures(t *testing.T) {
	dir := "../../../shared/captures"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s not available (%v): these tests read ../shared/captures beside the repository", dir, err)
	}
	out, _, err := run(t, "", "replay", filepath.Join(dir, "m3ua_isup.cap"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "calls         94: 94 answered, 0 unanswered") || !strings.Contains(out, "messages      IAM 94, ACM 94, ANM 94, REL 94, RLC 94") ||
		strings.Count(out, "\n") != 470+1+9 {
		t.Errorf("m3ua_isup.cap:\n%s", out[max(0, len(out)-800):])
	}
	out, _, err = run(t, "", "replay", filepath.Join(dir, "isup.cap"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"     2    0.006621  12163>11522  cic=213   CFN  cause=99 location=4 diagnostics=f4  [call 1]",
		"calls         1: 1 answered", "frame 2 12163>11522 cic=213: cause 99 parameter non-existent, discarded"} {
		if !strings.Contains(out, want) {
			t.Errorf("isup.cap output lacks %q:\n%s", want, out)
		}
	}
}

// TestReplayBadFiles: a truncated file, a file that is no capture and an
// unsupported link type each fail with the file's name (and the frame where
// there is one).
func TestReplayBadFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(replayData, "sll.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "cut.pcap")
	os.WriteFile(trunc, good[:len(good)-7], 0o644)
	notPcap := filepath.Join(dir, "notes.txt")
	os.WriteFile(notPcap, []byte("these are not packets\n"), 0o644)
	badLink := filepath.Join(dir, "usb.pcap")
	hdr := append([]byte(nil), good[:24]...)
	binary.LittleEndian.PutUint32(hdr[20:24], 189) // LINKTYPE_USB_LINUX_MMAPPED
	os.WriteFile(badLink, hdr, 0o644)
	empty := filepath.Join(dir, "empty.pcap")
	os.WriteFile(empty, nil, 0o644)
	full, err := replay.Load(filepath.Join(replayData, "sll.pcap"), replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := strconv.Itoa(full.Stats.Frames) // the record cut short
	cases := []struct{ path, want string }{
		{trunc, trunc + ": frame " + last + ": file truncated inside the record"},
		{notPcap, notPcap + ": not a pcap or pcapng file"},
		{badLink, badLink + ": unsupported link type 189"},
		{empty, empty + ": not a pcap or pcapng file (file too short)"},
		{filepath.Join(dir, "missing.pcap"), "missing.pcap: no such file"},
	}
	for _, c := range cases {
		_, _, err := run(t, "", "replay", c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.path, err, c.want)
		}
	}
	if _, _, err := run(t, "", "replay"); err == nil {
		t.Error("no file: no error")
	}
}

// TestReplayTo runs `isupgw replay --to` against a gateway (point code 2,
// its host alerts and answers) with the committed replayer capture, as fast
// as causality allows, writing its own pcap: every CIC matches, and the pcap
// it wrote holds the same five calls.
func TestReplayTo(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	var g *gateway.Gateway
	events := make(chan stack.Event, 1024)
	g, err := gateway.New(gateway.Config{
		Stack: stack.Config{OPC: 2, NI: 2, Groups: []stack.Group{{Name: "peer", DPC: 1, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 8}}}}},
		M3UA: m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
			Peers: []m3ua.Peer{{Name: "replayer", From: lo, DPCs: []mtp.PointCode{1}}}},
	}, func(e stack.Event) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Add(2)
	go func() { defer wg.Done(); _ = g.Wait() }()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-events:
				if in, ok := e.(stack.Incoming); ok {
					g.Stack.Submit(stack.Alert{Call: in.Call})
					g.Stack.Submit(stack.Answer{Call: in.Call})
				}
			}
		}
	}()
	own := filepath.Join(t.TempDir(), "live.pcap")
	out, stderr, err := run(t, "", "replay", "--to", g.Endpoint.Addr().String(), "--as", "1", "--speed", "0", "--pcap", own,
		filepath.Join(replayData, "replayer.pcap"))
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	if !strings.Contains(out, "5 CICs, 5 match, 0 differ; sent 10, received 15 messages") ||
		!strings.Contains(out, "cic=1     match  sent IAM REL; capture ACM ANM RLC; gateway ACM ANM RLC") {
		t.Errorf("output:\n%s", out)
	}
	if !strings.Contains(stderr, "association with "+g.Endpoint.Addr().String()+" active (IPSP over udp)") {
		t.Errorf("stderr: %s", stderr)
	}
	c, err := replay.Load(own, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := replay.Analyze(c, isup.ITU)
	if r := a.Report(); len(r.Calls) != 5 || r.Answered != 5 || len(r.Violations) != 0 {
		t.Errorf("own pcap: %d calls, %d answered, %v", len(r.Calls), r.Answered, r.Violations)
	}
	if _, _, err := run(t, "", "replay", "--to", "nowhere", filepath.Join(replayData, "replayer.pcap")); err == nil ||
		!strings.Contains(err.Error(), "--to") {
		t.Errorf("bad --to: %v", err)
	}
}
