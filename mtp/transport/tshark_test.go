package transport

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// TestHandshakePacketsDecodeInTshark writes the packets the listener
// builds itself (INIT ACK, COOKIE ACK, ERROR Stale Cookie, ABORT Out of
// Resource) into a capture and has tshark, an independent decoder, read
// them back field by field: a good CRC32c, no malformed packet, and the
// values we put in.
func TestHandshakePacketsDecodeInTshark(t *testing.T) {
	bin, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed; install the Debian package tshark to run this cross-check")
	}
	init := rawInit(2905, 2906, true)
	peerTag := binary.BigEndian.Uint32(init[sctpCommonHeaderLen+4:])
	chunk, err := checkInit(init)
	if err != nil {
		t.Fatal(err)
	}
	jar := newCookieJar(DefaultCookieLife, time.Now)
	b := binding{from: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), 2905), srcPort: 2905, dstPort: 2906}
	cookie := jar.make(chunk, b, 0x11223344, 0x55667788)
	echo := rawCookieEcho(2905, 2906, 0x11223344, cookie)
	pkts := [][]byte{
		initAck(chunk, 2906, 2905, 0x11223344, 0x55667788, 1<<20, 16, cookie),
		cookieAck(echo, peerTag),
		staleCookieError(echo, peerTag, 1500*time.Microsecond),
		outOfResourceAbort(echo, peerTag),
	}
	file := filepath.Join(t.TempDir(), "handshake.pcap")
	writeSCTPCapture(t, file, pkts)

	fields := []string{"sctp.checksum.status", "sctp.verification_tag", "sctp.chunk_type",
		"sctp.initack_initiate_tag", "sctp.initack_credit", "sctp.initack_nr_out_streams",
		"sctp.initack_nr_in_streams", "sctp.initack_initial_tsn", "sctp.parameter_type",
		"sctp.supported_chunk_type", "sctp.cause_code", "sctp.cause_measure_of_staleness", "_ws.malformed"}
	args := []string{"-n", "-r", file, "-o", "sctp.checksum:CRC-32C", "-T", "fields", "-E", "separator=|"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.String())
	}
	rows := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	tag := fmt.Sprintf("0x%08x", peerTag)
	// Fields: checksum status (1: good), tag, chunk type, INIT ACK's tag,
	// window, streams, TSN, parameters (State Cookie 7, Supported
	// Extensions 0x8008) and the chunks it names (RE-CONFIG, FORWARD TSN),
	// error cause (Stale Cookie 3 with its staleness in µs, Out of
	// Resource 4), malformed.
	want := []string{
		"1|" + tag + "|2|0x11223344|1048576|16|16|" + fmt.Sprint(0x55667788) + "|0x0007,0x8008|130,192|||",
		"1|" + tag + "|11||||||||||",
		"1|" + tag + "|9||||||||0x0003|1500|",
		"1|" + tag + "|6||||||||0x0004||",
	}
	if len(rows) != len(want) {
		t.Fatalf("tshark read %d packets, want %d:\n%s", len(rows), len(want), out)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("packet %d:\n got %s\nwant %s", i, rows[i], want[i])
		}
	}
}

// writeSCTPCapture writes SCTP packets as IPv4 protocol 132 frames.
func writeSCTPCapture(t *testing.T, file string, pkts [][]byte) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeRaw); err != nil {
		t.Fatal(err)
	}
	for i, p := range pkts {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolSCTP,
			SrcIP: net.IPv4(127, 0, 0, 1), DstIP: net.IPv4(127, 0, 0, 2)}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			ip, gopacket.Payload(p)); err != nil {
			t.Fatal(err)
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1_700_000_000+int64(i), 0),
			CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}
		if err := w.WritePacket(ci, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}
