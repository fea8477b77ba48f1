package gateway

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteDump(t *testing.T) {
	dir := t.TempDir()
	folder, err := WriteDump(dir, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(folder) != "isupgw-dump-20261201T090000.000Z" {
		t.Fatalf("folder %s", folder)
	}
	g, err := os.ReadFile(filepath.Join(folder, "goroutines.txt"))
	if err != nil || !strings.Contains(string(g), "TestWriteDump") {
		t.Fatalf("goroutine dump lacks this test's stack: %v", err)
	}
	h, err := os.ReadFile(filepath.Join(folder, "heap.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	// A pprof profile is a gzipped protocol buffer.
	zr, err := gzip.NewReader(bytes.NewReader(h))
	if err != nil {
		t.Fatalf("heap profile is not gzip: %v", err)
	}
	if b, err := io.ReadAll(zr); err != nil || len(b) == 0 {
		t.Fatalf("heap profile unreadable: %v", err)
	}
}
