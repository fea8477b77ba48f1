package config

import (
	"os"
	"strings"
	"testing"
)

// FuzzParse: any file gives a configuration or errors, never a panic, and
// every error line names the file (the check goes on past bad values, so
// the validation sees partly decoded sections).
func FuzzParse(f *testing.F) {
	f.Add(DefaultYAML())
	if b, err := os.ReadFile("../../examples/isupgw.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("pointcode: 1\ncircuit_groups: [{name: b, point_code: x, cics: [\"31-1\"]}]\ntimers: {t1: soon}\n"))
	f.Add([]byte("m3ua: {peers: [{name: a, connect: 1.2.3.4:5, point_codes: [[1]]}]}\nhost_api: {queue_size: [1], no_auth: maybe}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		t.Setenv(TokenEnv, "fuzz") // no token file is read
		cfg, err := Parse("f.yaml", b)
		if err == nil {
			if cfg == nil {
				t.Fatal("no error and no configuration")
			}
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(line, "f.yaml") {
				t.Fatalf("error line %q does not name the file", line)
			}
		}
	})
}
