package app

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
)

// ISUP message type codes (Q.763 Table 4) of a basic call.
const (
	isupIAM = 0x01
	isupACM = 0x06
	isupANM = 0x09
	isupREL = 0x0c
	isupRLC = 0x10
)

// callVia places a call from c towards dpc, waits for the answer and
// releases it; it returns the CIC the stack seized.
func callVia(ctx context.Context, c *client.Client, dpc uint32) (uint16, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := c.Outseize(ctx, client.Outseize{DPC: dpc, Called: "4930123456"})
	if err != nil {
		return 0, err
	}
	for {
		select {
		case e := <-c.Events():
			switch x := e.(type) {
			case *client.Answered:
				if x.Call == s.Call {
					return s.CIC, c.Release(ctx, s.Call, 16, 1)
				}
			case *client.Released:
				if x.Call == s.Call {
					return s.CIC, fmt.Errorf("call on CIC %d released before answer (cause %d)", s.CIC, x.Cause)
				}
			}
		case <-ctx.Done():
			return s.CIC, fmt.Errorf("call on CIC %d: %w", s.CIC, ctx.Err())
		}
	}
}

// TestM2PACaptureInTshark records, with the gateway's own capture (`capture:`
// in the config, as --pcap sets it), the M2PA traffic of calls both ways
// between two gateways, and checks tshark's decode against what the hosts
// did: every MSU carries the OPC and DPC of its direction, the SLS of its
// CIC (ITU: the CIC's 4 low bits, Q.704 §2.2.2 with the ISUP rule of Q.763
// §1.2), and each CIC sees exactly the calls placed on it in the order of
// Q.764 §2.1 (IAM, ACM, ANM, REL, RLC); the link status messages of the
// alignment decode (RFC 4165 §3.3.1), the link tests show as SLTM/SLTA
// (Q.707 §2.2), and tshark finds nothing malformed and no expert error.
func TestM2PACaptureInTshark(t *testing.T) {
	bin, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed; install the Debian package tshark to cross-check the M2PA capture")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pcap := filepath.Join(t.TempDir(), "m2pa.pcap")
	p0, p1 := freeUDPPort(t), freeUDPPort(t)
	a := start(t, ctx, fmt.Sprintf(yamlM2PA, 1, 2, "listen", p0, "listen", p1, 2)+"capture: "+pcap+"\n")
	b := start(t, ctx, fmt.Sprintf(yamlM2PA, 2, 1, "connect", p0, "connect", p1, 1))
	for _, p := range []*proc{a, b} {
		eventually(t, "links tested, destination available, circuits reset", func() bool {
			st := p.run.Gateway.Status()
			if len(st.Destinations) != 1 || !st.Destinations[0].Available || st.Circuits["idle"] != 8 {
				return false
			}
			for _, l := range st.Links {
				if l.State != "available" || l.SLTPassed == 0 {
					return false
				}
			}
			return len(st.Links) == 2
		})
	}
	answerCtx, stopAnswer := context.WithCancel(ctx)
	defer stopAnswer()
	go answerAll(answerCtx, dial(t, a, true))
	go answerAll(answerCtx, dial(t, b, true))
	outA, outB := dial(t, a, false), dial(t, b, false)

	// byCIC[cic] is the ISUP messages the calls put on the CIC, in order,
	// each as "A>B type" or "B>A type".
	byCIC := map[uint16][]string{}
	const perSide = 12
	for i := range 2 * perSide {
		from, dpc, orig, term := outA, uint32(2), "A>B", "B>A"
		if i >= perSide {
			from, dpc, orig, term = outB, 1, "B>A", "A>B"
		}
		cic, err := callVia(ctx, from, dpc)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		byCIC[cic] = append(byCIC[cic], fmt.Sprintf("%s %d", orig, isupIAM), fmt.Sprintf("%s %d", term, isupACM),
			fmt.Sprintf("%s %d", term, isupANM), fmt.Sprintf("%s %d", orig, isupREL), fmt.Sprintf("%s %d", term, isupRLC))
	}
	eventually(t, "both sides idle", func() bool {
		return a.run.Gateway.Status().Circuits["idle"] == 8 && b.run.Gateway.Status().Circuits["idle"] == 8
	})
	// B stops first, so A's capture ends with nothing half-done on the CICs;
	// then A stops, which closes the file.
	for _, p := range []*proc{b, a} {
		p.sigs <- syscall.SIGTERM
		select {
		case err := <-p.err:
			if err != nil {
				t.Fatalf("gateway stopped with %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("gateway did not stop")
		}
	}

	fields := []string{"frame.number", "sctp.srcport", "sctp.data_payload_proto_id", "m2pa.class", "m2pa.type", "m2pa.status",
		"mtp3.opc", "mtp3.dpc", "mtp3.sls", "mtp3.service_indicator", "mtp3mg.test.h0", "mtp3mg.test.h1",
		"isup.message_type", "isup.cic", "_ws.malformed", "_ws.expert.severity", "_ws.expert.message"}
	args := []string{"-n", "-r", pcap, "-o", "sctp.checksum:CRC 32c", "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %v: %v\n%s", args, err, stderr.String())
	}
	aPort := map[string]bool{strconv.Itoa(p0): true, strconv.Itoa(p1): true}
	seen := map[uint16][]string{}
	status := map[string]map[string]int{"A>B": {}, "B>A": {}} // link status values by direction
	slt := map[string]int{}                                   // "A>B 1/1" SLTM, "1/2" SLTA
	var frames, msus, isupN int
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		row := strings.Split(line, "\t")
		for len(row) < len(fields) {
			row = append(row, "")
		}
		frames++
		f := func(name string) string {
			for i, n := range fields {
				if n == name {
					return row[i]
				}
			}
			panic(name)
		}
		dir := "B>A"
		if aPort[f("sctp.srcport")] {
			dir = "A>B"
		}
		if f("_ws.malformed") != "" {
			t.Errorf("frame %s: tshark says malformed: %s", f("frame.number"), f("_ws.expert.message"))
		}
		for _, sev := range strings.Split(f("_ws.expert.severity"), ",") {
			// epan/proto.h: PI_ERROR is 0x00800000; warnings (0x00600000) are
			// tshark's own remarks (none expected either).
			if v, _ := strconv.ParseUint(sev, 0, 32); v >= 0x00600000 {
				t.Errorf("frame %s: tshark expert severity %s: %s", f("frame.number"), sev, f("_ws.expert.message"))
			}
		}
		if f("sctp.data_payload_proto_id") != "5" || f("m2pa.class") != "11" {
			t.Errorf("frame %s: ppid %q m2pa class %q, want 5 and 11 (RFC 4165 §2.1)", f("frame.number"), f("sctp.data_payload_proto_id"), f("m2pa.class"))
			continue
		}
		switch f("m2pa.type") {
		case "2": // Link Status
			status[dir][f("m2pa.status")]++
			continue
		case "1": // User Data; an empty one only acknowledges
		default:
			t.Errorf("frame %s: m2pa type %q", f("frame.number"), f("m2pa.type"))
			continue
		}
		if f("mtp3.opc") == "" {
			continue
		}
		msus++
		wantOPC, wantDPC := "1", "2"
		if dir == "B>A" {
			wantOPC, wantDPC = "2", "1"
		}
		if f("mtp3.opc") != wantOPC || f("mtp3.dpc") != wantDPC {
			t.Errorf("frame %s (%s): opc %s dpc %s", f("frame.number"), dir, f("mtp3.opc"), f("mtp3.dpc"))
		}
		switch f("mtp3.service_indicator") {
		case "0x01", "1":
			h0, _ := strconv.ParseUint(f("mtp3mg.test.h0"), 0, 8)
			h1, _ := strconv.ParseUint(f("mtp3mg.test.h1"), 0, 8)
			slt[fmt.Sprintf("%s %d/%d", dir, h0, h1)]++
		case "0x05", "5":
			isupN++
			cic, err := strconv.ParseUint(f("isup.cic"), 0, 16)
			if err != nil {
				t.Errorf("frame %s: isup.cic %q", f("frame.number"), f("isup.cic"))
				continue
			}
			if sls, _ := strconv.ParseUint(f("mtp3.sls"), 0, 8); sls != cic&0x0f {
				t.Errorf("frame %s: CIC %d on SLS %s, want %d", f("frame.number"), cic, f("mtp3.sls"), cic&0x0f)
			}
			typ, err := strconv.ParseUint(f("isup.message_type"), 0, 8)
			if err != nil {
				t.Errorf("frame %s: isup.message_type %q", f("frame.number"), f("isup.message_type"))
				continue
			}
			switch typ {
			case isupIAM, isupACM, isupANM, isupREL, isupRLC:
				seen[uint16(cic)] = append(seen[uint16(cic)], fmt.Sprintf("%s %d", dir, typ))
			}
		}
	}
	t.Logf("%d frames, %d MSUs, %d ISUP; link status %v; link tests %v", frames, msus, isupN, status, slt)
	for cic, want := range byCIC {
		if got := strings.Join(seen[cic], ", "); got != strings.Join(want, ", ") {
			t.Errorf("CIC %d in tshark:\n  %s\nwant\n  %s", cic, got, strings.Join(want, ", "))
		}
	}
	for cic := range seen {
		if _, ok := byCIC[cic]; !ok {
			t.Errorf("CIC %d carries calls in tshark that no host placed: %v", cic, seen[cic])
		}
	}
	// Emergency alignment (RFC 4165 §4.1.3): Alignment (1), Proving
	// Emergency (3), Ready (4), each way. A's Out of Service (9) at its stop
	// may or may not make it out.
	for dir, st := range status {
		for _, v := range []string{"1", "3", "4"} {
			if st[v] == 0 {
				t.Errorf("%s: no link status %s in tshark (%v)", dir, v, st)
			}
		}
	}
	// Each side tests both links: SLTM (H0 1, H1 1) and the other's SLTA (1/2).
	for _, k := range []string{"A>B 1/1", "A>B 1/2", "B>A 1/1", "B>A 1/2"} {
		if slt[k] < 2 {
			t.Errorf("%d link test messages %s in tshark, want one per link (%v)", slt[k], k, slt)
		}
	}
}
