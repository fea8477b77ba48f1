package app

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeGeneratedToken writes a token generated for this run where hosts can
// read it, mode 0600: to path, or, when path is "", to host-token in a new
// private directory (0700) under $XDG_RUNTIME_DIR or the temporary
// directory. The token itself is never logged: a log is read, kept and
// shipped by more people than may call. remove deletes what it wrote.
func writeGeneratedToken(path, token string) (written string, remove func(), err error) {
	if path == "" {
		base := os.Getenv("XDG_RUNTIME_DIR")
		if base == "" {
			base = os.TempDir()
		}
		dir, err := os.MkdirTemp(base, "isupgw-")
		if err != nil {
			return "", nil, err
		}
		path = filepath.Join(dir, "host-token")
		if err := writePrivate(path, token); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		return path, func() { os.RemoveAll(dir) }, nil
	}
	if err := writePrivate(path, token); err != nil {
		return "", nil, err
	}
	return path, func() { os.Remove(path) }, nil
}

// writePrivate replaces path with a file of mode 0600 holding token: written
// beside it and renamed, so no reader sees a partial token or a wider mode.
func writePrivate(path, token string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".host-token-*") // CreateTemp makes it 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.WriteString(token + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
