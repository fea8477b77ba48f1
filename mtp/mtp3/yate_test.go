package mtp3

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/mtp3/l2/l2test"
)

const yateCapture = "../../../shared/captures/m2pa_isup_itu.pcap"

// yateMSUs returns the MTP3 MSUs the side on SCTP port 3565 sent in the
// Yate M2PA capture (M2PA User Data with data, after the PRI octet).
func yateMSUs(t *testing.T) [][]byte {
	t.Helper()
	f, err := os.Open(yateCapture)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("capture %s absent: the MTP3 replay test needs it (see ../shared/captures/README.md)", yateCapture)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		data, _, err := r.ReadPacketData()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		sc, ok := p.Layer(layers.LayerTypeSCTP).(*layers.SCTP)
		if !ok || sc.SrcPort != 3565 {
			continue
		}
		for _, l := range p.Layers() {
			d, ok := l.(*layers.SCTPData)
			// M2PA User Data (class 11, type 1) longer than the 16-octet header.
			if ok && d.PayloadProtocol == 5 && len(d.Payload) > 17 && d.Payload[2] == 11 && d.Payload[3] == 1 {
				out = append(out, append([]byte(nil), d.Payload[17:]...))
			}
		}
	}
}

// TestYateMTP3Accepted plays point code 1 of the Yate capture against what
// point code 2 sent: its SLTM is answered with an SLTA carrying its pattern,
// its TRA ends our restart, every MSU is understood (nothing discarded) and
// its ISUP messages reach the user with their labels. Our own SLTM is
// answered by the test, as the capture's answers echo the other side's
// pattern, not ours.
func TestYateMTP3Accepted(t *testing.T) {
	msus := yateMSUs(t)
	if len(msus) < 40 {
		t.Fatalf("only %d MSUs from PC 2 in the capture", len(msus))
	}
	x, _ := fakePair("yate")
	n, err := New(Config{Variant: ITU, OPC: 1, NI: 2, Clock: l2test.New(), InlineControl: true, UserParts: []uint8{mtp.SIISUP},
		Linksets: []LinksetConfig{{Name: "yate", Adjacent: 2, Links: []LinkConfig{{SLC: 0, Link: x}}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Start()
	x.mu.Lock()
	x.inService = true
	u := x.user
	x.mu.Unlock()
	u.InService()
	sent := func() [][]byte {
		x.mu.Lock()
		defer x.mu.Unlock()
		var o [][]byte
		for _, e := range x.inflight {
			o = append(o, e.msu)
		}
		x.inflight = nil
		return o
	}
	// Our SLTM, answered by the test.
	out := sent()
	lbl, sif, err := DecodeMSU(ITU, out[0])
	if err != nil || lbl.SI != SISLT || lbl.DPC != 2 || lbl.OPC != 1 || lbl.NI != 2 {
		t.Fatalf("our first MSU %v %v", lbl, err)
	}
	ours, _ := DecodeSLT(ITU, sif)
	answer := SLT{H0H1: SLTA, Pattern: ours.Pattern}.Append(ITU, AppendMSU(ITU, nil, mtp.Label{OPC: 2, DPC: 1, SI: SISLT, NI: 2}, nil))
	u.Received(answer)

	var isupIn, sltmIn int
	for _, m := range msus {
		l, sif, err := DecodeMSU(ITU, m)
		if err != nil {
			t.Fatal(err)
		}
		u.Received(m)
		switch l.SI {
		case SISLT:
			s, _ := DecodeSLT(ITU, sif)
			if s.H0H1 != SLTM {
				continue
			}
			sltmIn++
			var reply []byte
			for _, b := range sent() {
				if b[0]&0x0F == SISLT {
					reply = b
				}
			}
			rl, rsif, _ := DecodeMSU(ITU, reply)
			r, err := DecodeSLT(ITU, rsif)
			if err != nil || r.H0H1 != SLTA || !bytes.Equal(r.Pattern, s.Pattern) || rl.DPC != 2 || rl.SLS != l.SLS {
				t.Fatalf("our answer to Yate's SLTM: %v %+v %v", rl, r, err)
			}
		case mtp.SIISUP:
			isupIn++
		}
	}
	if sltmIn == 0 || isupIn < 40 {
		t.Fatalf("%d SLTM and %d ISUP messages in the capture", sltmIn, isupIn)
	}
	if d := n.Stats().Discarded.Load(); d != 0 {
		t.Fatalf("%d of Yate's MSUs discarded", d)
	}
	if !n.Reachable(2) {
		t.Fatal("PC 2 not reachable after Yate's TRA")
	}
	got := collect(t, n, isupIn)
	if got[0].OPC != 2 || got[0].DPC != 1 || got[0].SI != mtp.SIISUP || got[0].NI != 2 || got[0].Peer != "yate" {
		t.Fatalf("first ISUP indication %v from %s", got[0].Label, got[0].Peer)
	}
}
