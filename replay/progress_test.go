package replay

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProgress: the bar renders fraction and amounts, redraws at most ten
// times a second except for the final update, and Finish erases it.
func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, "reading x.pcap", "MiB")
	now := time.Unix(0, 0)
	p.now = func() time.Time { return now }
	p.Update(3<<20, 12<<20)
	if got := buf.String(); got != "\rreading x.pcap [#######.......................]  25% 3.0/12.0 MiB" {
		t.Errorf("first draw %q", got)
	}
	buf.Reset()
	now = now.Add(50 * time.Millisecond)
	p.Update(4<<20, 12<<20)
	if buf.Len() != 0 {
		t.Errorf("redrawn after 50 ms: %q", buf.String())
	}
	p.Update(12<<20, 12<<20)
	if !strings.Contains(buf.String(), "[##############################] 100% 12.0/12.0 MiB") {
		t.Errorf("final draw %q", buf.String())
	}
	buf.Reset()
	p.Finish()
	if s := buf.String(); !strings.HasPrefix(s, "\r ") || !strings.HasSuffix(s, "\r") || strings.TrimSpace(s) != "" {
		t.Errorf("finish %q", s)
	}
	c := NewProgress(&buf, "sent", "")
	if got := c.render(5, 10); got != "sent [###############...............]  50% 5/10" {
		t.Errorf("count bar %q", got)
	}
}

// TestLoadReportsProgress: Load calls the progress function, ending at the
// file's size.
func TestLoadReportsProgress(t *testing.T) {
	path := filepath.Join(testdataDir, "gateways.pcap")
	var last, total int64
	calls := 0
	if _, err := Load(path, Options{Progress: func(d, tot int64) { last, total = d, tot; calls++ }}); err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != total || total == 0 {
		t.Errorf("%d calls, last %d of %d", calls, last, total)
	}
}
