package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"
)

// ExitCodeRed is the binary's exit status after Code Red, distinct from a crash
// (2) or a configuration error (1), so that a service manager or an operator can
// tell a deliberate restart from a failure.
const ExitCodeRed = 3

// WriteDump writes the diagnostic dump of Code Red: goroutine stacks (text) and
// a heap profile (pprof format) in a new folder under dir named after the time.
// It returns the folder.
func WriteDump(dir string, now time.Time) (string, error) {
	folder := filepath.Join(dir, "isupgw-dump-"+now.UTC().Format("20060102T150405.000Z"))
	if err := os.MkdirAll(folder, 0o750); err != nil {
		return "", err
	}
	write := func(name, profile string, debug int) error {
		f, err := os.Create(filepath.Join(folder, name))
		if err != nil {
			return err
		}
		p := pprof.Lookup(profile)
		if p == nil {
			f.Close()
			return fmt.Errorf("no %s profile", profile)
		}
		if err := p.WriteTo(f, debug); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	if err := write("goroutines.txt", "goroutine", 2); err != nil {
		return folder, err
	}
	if err := write("heap.pprof", "heap", 0); err != nil {
		return folder, err
	}
	return folder, nil
}
