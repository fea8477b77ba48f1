package isup

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/isupgw/isupgw/mtp/capture"
)

// TestRealCaptures decodes every ISUP message of the public captures, checks that
// each re-encodes byte-identical, and compares the decoded fields with tshark's.
func TestRealCaptures(t *testing.T) {
	for _, tc := range []struct {
		file    string
		prefs   []string
		minMsgs int
	}{
		{"m3ua_isup.cap", nil, 470},                       // 94 calls x 5 messages
		{"isup.cap", []string{"m3ua.version:draft-6"}, 6}, // M3UA draft framing, one call with CFN
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := sharedCapture(t, tc.file)
			ours := decodeCapture(t, path, ITU)
			n := 0
			for _, msgs := range ours {
				n += len(msgs)
			}
			if n < tc.minMsgs {
				t.Fatalf("decoded %d ISUP messages, want at least %d", n, tc.minMsgs)
			}
			tshark := needTshark(t)
			fields := fieldsFor(ITU)
			theirs := tsharkFrames(t, tshark, path, tc.prefs, fields)
			compared := compareFrames(t, ours, theirs, fields)
			t.Logf("%s: %d messages in %d frames, %d field values equal to tshark's", tc.file, n, len(ours), compared)
		})
	}
}

// decodeCapture returns the decoded ISUP messages of a capture by frame number,
// failing the test on any message that does not decode or re-encode identically.
func decodeCapture(t *testing.T, path string, v Variant) map[int][]Message {
	t.Helper()
	r, err := capture.Open(path, capture.WithANSI(v == ANSI))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[int][]Message{}
	for {
		cm, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if !cm.HasLabel || cm.SI != 5 {
			continue
		}
		m, err := Decode(cm.Payload, v)
		if err != nil {
			t.Errorf("frame %d: % X: %v", cm.Frame, cm.Payload, err)
			continue
		}
		again, err := Marshal(m, v)
		if err != nil || !bytes.Equal(again, cm.Payload) {
			t.Errorf("frame %d %s: re-encoded\n % X (%v)\nwant\n % X", cm.Frame, describe(m), again, err, cm.Payload)
		}
		out[cm.Frame] = append(out[cm.Frame], m)
	}
	return out
}
