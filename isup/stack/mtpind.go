package stack

import (
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// mtpEvent reacts to the MTP's status indications (Q.764 §2.13). Congestion is
// congestion control's business and passes through untouched.
func (c *core) mtpEvent(e mtp.Event) {
	switch x := e.(type) {
	case mtp.Pause:
		c.eachPeerCovered(x.PC, x.Mask, func(p int) {
			pr := &c.peers[p]
			if pr.available {
				pr.available = false
				c.emit(Alarm{Kind: AlarmDestinationUnavailable, PC: pr.group.DPC, Text: "MTP pause: destination unreachable"})
			}
		})
	case mtp.Resume:
		c.eachPeerCovered(x.PC, x.Mask, func(p int) {
			pr := &c.peers[p]
			if pr.available {
				return
			}
			pr.available = true
			c.emit(Alarm{Kind: AlarmDestinationUnavailable, PC: pr.group.DPC, Cleared: true, Text: "MTP resume"})
			if c.cfg.ResetOnResume || (c.cfg.ResetOnStart && !pr.resetDone) {
				c.resetGroup(p)
			}
		})
	case mtp.UserPartUnavailable:
		if x.User != mtp.SIISUP {
			return
		}
		p, ok := c.peerByPC[x.PC]
		if !ok {
			return
		}
		pr := &c.peers[p]
		if pr.userPart {
			pr.userPart = false
			c.emit(Alarm{Kind: AlarmDestinationUnavailable, PC: pr.group.DPC, Text: "ISUP user part unavailable"})
		}
		// An inaccessible user part is tested with UPT every T4; an unequipped one
		// waits for the far end to speak again.
		if x.Cause != mtp.UPUUnequippedRemote && pr.running&(1<<tT4) == 0 {
			c.startPeerTimer(p, tT4)
		}
	}
}

func (c *core) eachPeerCovered(pc mtp.PointCode, mask uint8, f func(p int)) {
	if mask == 0 {
		if p, ok := c.peerByPC[pc]; ok {
			f(p)
		}
		return
	}
	for p := range c.peers {
		if mask >= 32 || c.peers[p].group.DPC>>mask == pc>>mask {
			f(p)
		}
	}
}

// userPartAvailable ends the user part test: the far end spoke.
func (c *core) userPartAvailable(p int) {
	pr := &c.peers[p]
	pr.userPart = true
	c.stopPeerTimer(p, tT4)
	c.emit(Alarm{Kind: AlarmDestinationUnavailable, PC: pr.group.DPC, Cleared: true, Text: "ISUP user part available"})
}

func (c *core) peerTimerExpired(p int, k timerKind) {
	if k != tT4 {
		return
	}
	pr := &c.peers[p]
	c.send(p, &isup.Generic{Kind: isup.UPT, Circuit: isup.Circuit{CIC: c.circuits[pr.first].cic}, Optional: isup.Optional{}})
	c.startPeerTimer(p, tT4)
}

// start is the stack's first action: reset every group if configured, or else
// announce the circuits that stayed blocked across the restart.
func (c *core) start() {
	for p := range c.peers {
		if c.cfg.ResetOnStart && c.peers[p].available {
			c.resetGroup(p)
			continue
		}
		// The blocking saved before the restart is announced again, each in
		// its own kind (BLO, hardware CGB).
		pr := &c.peers[p]
		var blocked []int32
		for ci := pr.first; ci < pr.first+pr.count; ci++ {
			if c.circuits[ci].block&(blkLocalMaint|blkLocalHW) != 0 {
				blocked = append(blocked, ci)
			}
		}
		c.reannounceBlocking(p, blocked)
	}
}
