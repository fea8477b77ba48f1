package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fuzzLinks are the link types the first fuzz byte selects from.
var fuzzLinks = []LinkType{LinkEthernet, LinkRaw, LinkIPv4, LinkIPv6, LinkSLL, LinkSLL2,
	LinkNull, LinkLoop, LinkMTP2, LinkMTP2WithPHDR, LinkMTP3, LinkRawDLT12}

// FuzzReader feeds arbitrary bytes as the body of a pcap file (record
// headers and frames) after a valid file header whose link type the first
// byte selects; 0xff instead uses the input as a whole file (pcap, pcapng,
// gzip). The Reader must never panic, and must keep its ownership promise:
// returned slices stay valid after later calls.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		var file []byte
		if in[0] == 0xff {
			file = in[1:]
		} else {
			hdr := make([]byte, 24)
			binary.LittleEndian.PutUint32(hdr[0:4], magicPcapMicro)
			binary.LittleEndian.PutUint16(hdr[4:6], 2)
			binary.LittleEndian.PutUint16(hdr[6:8], 4)
			binary.LittleEndian.PutUint32(hdr[16:20], 65535)
			binary.LittleEndian.PutUint32(hdr[20:24], uint32(fuzzLinks[int(in[0])%len(fuzzLinks)]))
			file = append(hdr, in[1:]...)
		}
		for _, ansi := range []bool{false, true} {
			r, err := NewReader(bytes.NewReader(file), WithANSI(ansi), WithMaxReassembly(4096))
			if err != nil {
				return
			}
			var kept []Message
			var copies [][]byte
			for i := 0; i < 10000; i++ {
				m, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				var fe *FrameError
				if err != nil && !errors.As(err, &fe) {
					break
				}
				if err != nil {
					continue
				}
				if m.Frame < 1 || (m.HasLabel && m.Payload == nil && m.M3UA == nil && m.MSU == nil) {
					t.Fatalf("bad message %+v", m)
				}
				kept = append(kept, m)
				copies = append(copies, append(append([]byte(nil), m.M3UA...), m.MSU...))
			}
			for i, m := range kept {
				if !bytes.Equal(append(append([]byte(nil), m.M3UA...), m.MSU...), copies[i]) {
					t.Fatalf("message %d changed after later reads", i)
				}
			}
		}
	})
}

// fuzzSeeds builds seeds from our Writer in every link type and, when
// present, from the shared sample captures (read at run time, never stored).
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	body := func(link LinkType, file []byte) {
		for i, l := range fuzzLinks {
			if l == link && len(file) > 24 {
				seeds = append(seeds, append([]byte{byte(i)}, file[24:]...))
			}
		}
		seeds = append(seeds, append([]byte{0xff}, file...))
	}
	a, b := netip.MustParseAddrPort("10.0.0.1:2905"), netip.MustParseAddrPort("10.0.0.2:2905")
	a6, b6 := netip.MustParseAddrPort("[2001:db8::1]:2905"), netip.MustParseAddrPort("[2001:db8::2]:2905")
	for _, c := range []struct {
		link   LinkType
		udp    bool
		v6, ms bool
	}{{LinkEthernet, false, false, false}, {LinkEthernet, true, true, false}, {LinkRaw, false, true, false},
		{LinkSLL, true, false, false}, {LinkIPv4, false, false, false}, {LinkMTP2, false, false, true}, {LinkMTP3, false, false, true}} {
		var buf bytes.Buffer
		opts := []Option{WithLinkType(c.link), WithMicroseconds()}
		if c.udp {
			opts = append(opts, WithSCTPOverUDP(DefaultSCTPOverUDPPort))
		}
		w, err := NewWriter(&buf, opts...)
		if err != nil {
			f.Fatal(err)
		}
		src, dst := a, b
		if c.v6 {
			src, dst = a6, b6
		}
		ts := time.Unix(1, 0)
		if c.ms {
			_ = w.WriteMSU(ts, 0x85, Label{OPC: 1, DPC: 2, SLS: 3}, iamCIC1)
		} else {
			_ = w.WriteM3UA(ts, src, dst, 1, DataMessage(1, 2, 5, 2, 0, 3, iamCIC1, 9))
			_ = w.WriteM3UA(ts, dst, src, 0, []byte{1, 0, 3, 4, 0, 0, 0, 8})
		}
		body(c.link, buf.Bytes())
	}
	// Fragmented DATA and I-DATA, bundled.
	iam := DataMessage(1, 2, 5, 2, 0, 1, iamCIC1)
	body(LinkEthernet, buildPcap(f, LinkEthernet,
		ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, sctpPkt(2905, 2905,
			dataChunkB(flagBegin, 1, 1, 0, 3, iam[:10]), dataChunkB(flagEnd, 2, 1, 0, 3, iam[10:])))),
		ethFrame(etherIPv6, ipv6Pkt(protoSCTP, nil, sctpPkt(2905, 2905,
			idataChunkB(flagBegin, 1, 1, 5, 3, iam[:10]), idataChunkB(flagEnd, 2, 1, 5, 1, iam[10:]))), 7)))
	// M2PA: a Link Status, an empty User Data (an acknowledgement) and one
	// carrying the IAM's MSU, bundled on port 3565.
	msu := append([]byte{0, 0x85, 2, 0x40, 0, 0x30}, iamCIC1...)
	m2pa := func(typ byte, data []byte) []byte {
		b := []byte{1, 0, 11, typ, 0, 0, 0, byte(16 + len(data)), 0, 0xff, 0xff, 0xff, 0, 0, 0, 0}
		return append(b, data...)
	}
	body(LinkEthernet, buildPcap(f, LinkEthernet,
		ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, sctpPkt(3565, 3565,
			dataChunkB(flagBegin|flagEnd, 1, 1, 0, 5, m2pa(2, []byte{0, 0, 0, 1})),
			dataChunkB(flagBegin|flagEnd, 2, 1, 1, 5, m2pa(1, nil)),
			dataChunkB(flagBegin|flagEnd, 3, 1, 2, 5, m2pa(1, msu)))))))
	for _, name := range []string{"isup.cap", "centile_m3ua.cap", "bicc.pcap", "m2pa_isup_itu.pcap"} {
		if b, err := os.ReadFile(filepath.Join(capturesDir, name)); err == nil {
			body(LinkEthernet, b)
		}
	}
	return seeds
}
