package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/isupgw/isupgw/mtp"
)

// savedState is what survives a restart: the circuits an operator blocked here.
type savedState struct {
	Version int              `json:"version"`
	Blocked []blockedCircuit `json:"locally_blocked"`
}

type blockedCircuit struct {
	DPC      mtp.PointCode `json:"dpc"`
	CIC      uint16        `json:"cic"`
	Hardware bool          `json:"hardware,omitempty"`
}

// loadState reads the state file; a missing file is an empty state.
func loadState(path string) (savedState, error) {
	var st savedState
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("state file %s: %w", path, err)
	}
	return st, nil
}

// applyState blocks the saved circuits locally; unknown ones are reported.
func (c *core) applyState(st savedState) error {
	var errs []error
	for _, b := range st.Blocked {
		p, ok := c.peerByPC[b.DPC]
		if !ok {
			errs = append(errs, fmt.Errorf("state file: no circuit group for DPC %s (CIC %d stays unblocked)", c.cfg.PointCodes.Format(b.DPC), b.CIC))
			continue
		}
		ci, ok := c.circuitAt(p, b.CIC)
		if !ok {
			errs = append(errs, fmt.Errorf("state file: CIC %d is not in the group for DPC %s", b.CIC, c.cfg.PointCodes.Format(b.DPC)))
			continue
		}
		if b.Hardware {
			c.circuits[ci].block |= blkLocalHW
		} else {
			c.circuits[ci].block |= blkLocalMaint
		}
		c.refresh(ci)
	}
	return errors.Join(errs...)
}

// currentState lists the locally blocked circuits in a stable order.
func (c *core) currentState() savedState {
	st := savedState{Version: 1, Blocked: []blockedCircuit{}}
	for i := range c.circuits {
		cc := &c.circuits[i]
		if cc.block&(blkLocalMaint|blkLocalHW) == 0 {
			continue
		}
		st.Blocked = append(st.Blocked, blockedCircuit{DPC: c.peers[cc.peer].group.DPC, CIC: cc.cic, Hardware: cc.block&blkLocalHW != 0})
	}
	sort.Slice(st.Blocked, func(i, j int) bool {
		a, b := st.Blocked[i], st.Blocked[j]
		return a.DPC < b.DPC || a.DPC == b.DPC && a.CIC < b.CIC
	})
	return st
}

// saveState writes the file atomically: a temporary file in the same folder,
// synced, then renamed over the old one, so a crash leaves one or the other.
func saveState(path string, st savedState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
