package isup

import (
	"encoding/hex"
	"strings"
	"testing"
)

// hx joins annotated hex pieces ("01 00", "0A") into bytes; a test table keeps each
// field on its own line with a comment, as go-gtp's tables do.
func hx(t testing.TB, parts ...string) []byte {
	t.Helper()
	s := strings.ReplaceAll(strings.Join(parts, ""), " ", "")
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex in test table %q: %v", s, err)
	}
	return b
}

func mustCdPN(t testing.TB, nai, npi uint8, digits string) CalledPartyNumber {
	t.Helper()
	p, err := NewCalledPartyNumber(nai, npi, digits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustOptional(t testing.TB, ps ...ParamEncoder) Optional {
	t.Helper()
	o := Optional{}
	for _, p := range ps {
		if err := o.Set(p); err != nil {
			t.Fatal(err)
		}
	}
	return o
}
