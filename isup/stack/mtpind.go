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
				pr.published()
				c.emit(Alarm{Kind: AlarmDestinationUnavailable, PC: pr.group.DPC, Text: "MTP pause: destination unreachable"})
				c.releaseUnanswered(p)
			}
		})
	case mtp.Resume:
		c.eachPeerCovered(x.PC, x.Mask, func(p int) {
			pr := &c.peers[p]
			if pr.available {
				return
			}
			pr.available = true
			pr.published()
			c.emit(Alarm{Kind: AlarmDestinationUnavailable, PC: pr.group.DPC, Cleared: true, Text: "MTP resume"})
			c.repeatLostRELs(p)
			c.repeatPausedGRAs(p)
			if c.cfg.ResetOnResume || (c.cfg.ResetOnStart && !pr.resetDone) || pr.resetOnResume {
				pr.resetOnResume = false
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
			pr.published()
			c.emit(Alarm{Kind: AlarmDestinationUnavailable, PC: pr.group.DPC, Text: "ISUP user part unavailable"})
		}
		// An inaccessible user part is tested with UPT every T4; an unequipped one
		// waits for the far end to speak again.
		if x.Cause != mtp.UPUUnequippedRemote && pr.running&(1<<tT4) == 0 {
			c.startPeerTimer(p, tT4)
		}
	}
}

// releaseUnanswered ends the calls not yet answered towards a destination
// that MTP has paused: no ACM, ANM or CON can reach us while it is paused
// (Q.764 §2.13: no signalling to a paused destination), so a caller would
// otherwise wait for T7 or T9 on a call that cannot complete. The host is told
// at once (cause 41, temporary failure: the condition is not expected to
// last); the REL goes nowhere now and is repeated on resume. Answered calls
// keep their speech path and are left alone.
func (c *core) releaseUnanswered(p int) {
	pr := &c.peers[p]
	for ci := pr.first; ci < pr.first+pr.count; ci++ {
		if cl := c.circuits[ci].call; cl != nil && cl.phase != phAnswered {
			c.stats.PausedReleases++
			c.releaseCall(cl, isup.CauseTemporaryFailure, isup.LocationPublicLocal, "MTP pause: destination unreachable", true)
		}
	}
}

// repeatLostRELs sends again, on MTP resume, every REL still waiting for its
// RLC towards the destination: one sent while it was paused was lost, and the
// circuit would stay releasing until T1 (up to a minute) repeated it. It is
// T1's own action (Q.764 §2.9.6), the same REL, taken early; T1 restarts and
// T5 keeps running.
func (c *core) repeatLostRELs(p int) {
	pr := &c.peers[p]
	for ci := pr.first; ci < pr.first+pr.count; ci++ {
		rel, ok := c.sentREL[ci]
		if !ok || c.circuits[ci].running&(1<<tT1) == 0 {
			continue
		}
		c.stats.ResumeRELs++
		c.send(p, rel)
		c.startTimer(ci, tT1)
	}
}

// repeatPausedGRAs sends again, on MTP resume, the GRAs answered while the
// destination was paused (see onGroupReset): the far end's GRS is still
// pending if MTP dropped them. A GRA it did receive makes the repeat an
// unexpected GRA there, discarded (Q.764 §2.9.3.1, unexpected GRA).
func (c *core) repeatPausedGRAs(p int) {
	pr := &c.peers[p]
	for cic, gra := range pr.pausedGRAs {
		c.stats.ResumeGRAs++
		c.send(p, gra)
		delete(pr.pausedGRAs, cic)
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
	pr.published()
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
