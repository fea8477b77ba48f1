package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// capturesDir is the shared folder of public sample captures, beside the
// repository. Tests that need it skip when it is absent; captures are never
// copied into the repository.
const capturesDir = "../../../shared/captures"

func sampleCapture(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(capturesDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("sample capture %s not available (%v); these tests need ../shared/captures beside the repository", p, err)
	}
	return p
}

func needTshark(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed; install the Debian package tshark to run this cross-check")
	}
	return p
}

// tsharkFields runs tshark -T fields on file and returns one row per frame.
func tsharkFields(t *testing.T, file string, prefs []string, fields ...string) [][]string {
	t.Helper()
	bin := needTshark(t)
	args := []string{"-n", "-r", file, "-T", "fields", "-E", "separator=/t"}
	for _, p := range prefs {
		args = append(args, "-o", p)
	}
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
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		rows = append(rows, strings.Split(line, "\t"))
	}
	return rows
}

// splitList splits tshark's comma-separated repeated field values.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func atou(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatalf("tshark value %q: %v", s, err)
	}
	return v
}

// readAll returns every message of a capture and fails on any error.
func readAll(t *testing.T, r *Reader) []Message {
	t.Helper()
	var msgs []Message
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			return msgs
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		msgs = append(msgs, m)
	}
}

func openAll(t *testing.T, path string, opts ...Option) ([]Message, Stats) {
	t.Helper()
	r, err := Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	msgs := readAll(t, r)
	return msgs, r.Stats()
}

// rawFrames returns the records of a pcap file.
func rawFrames(t *testing.T, b []byte) [][]byte {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		d, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
}

// buildPcap writes frames as a pcap file with the given link type.
func buildPcap(t testing.TB, link LinkType, frames ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkType(link)); err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(int64(1000+i), 0), CaptureLength: len(f), Length: len(f)}
		if err := w.WritePacket(ci, f); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// pcapgoNg starts a pcapng stream with one interface; the returned function
// writes a packet and flushes.
func pcapgoNg(buf *bytes.Buffer, link LinkType) (func([]byte) error, error) {
	w, err := pcapgo.NewNgWriter(buf, layers.LinkType(link))
	if err != nil {
		return nil, err
	}
	return func(f []byte) error {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: len(f), Length: len(f)}
		if err := w.WritePacket(ci, f); err != nil {
			return err
		}
		return w.Flush()
	}, nil
}
