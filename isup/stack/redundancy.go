package stack

import "github.com/isupgw/isupgw/isup"

// Active/standby (an override-mode pair of ASPs with one point code and the
// same circuit groups): the instance that takes over resets every circuit,
// as an exchange restart does, because it cannot know what its predecessor
// left on them; the one that gives them up forgets them without signalling,
// because they are no longer its to signal on.

// Takeover queues, behind the MTP indications already queued, the start of
// this instance's ownership of the circuits: the local blocking is read again
// from the state file (the predecessor's maintenance blocks, when the pair
// shares the file; the file wins over what this instance held), and every
// group is reset with GRS (Q.764 §2.9.3: the circuit group reset procedure
// of a restart) at once if its destination is reachable, else at its MTP
// resume. The GRA, or the GRS's own procedure, then announces the blocking
// again (Q.764 §2.9.3.1 c), §2.9.3.2), so an operator's block survives the
// failover. Calls still held here end (their hosts get Released).
func (s *Stack) Takeover() {
	s.inbound <- item{fn: func(c *core) { c.advance(s.now()); c.takeover() }}
}

// Standby queues the end of this instance's ownership of its circuits: every
// call ends for its host (Released, cause 41 temporary failure, with reason),
// every circuit procedure and timer stops, and nothing is sent: the new
// active instance resets the circuits with the far end.
func (s *Stack) Standby(reason string) {
	s.inbound <- item{fn: func(c *core) { c.advance(s.now()); c.standby(reason) }}
}

func (c *core) takeover() {
	c.stats.Takeovers++
	if c.cfg.StateFile != "" {
		st, err := loadState(c.cfg.StateFile)
		if err != nil {
			c.emit(Alarm{Kind: AlarmBlockingUnanswered, Text: "takeover: cannot read the blocking state, keeping the blocks held here: " + err.Error()})
		} else {
			for i := range c.circuits {
				c.circuits[i].block &^= blkLocalMaint | blkLocalHW
			}
			if err := c.applyState(st); err != nil {
				c.emit(Alarm{Kind: AlarmBlockingUnanswered, Text: "takeover: " + err.Error()})
			}
			for i := range c.circuits {
				c.refresh(int32(i))
			}
		}
	}
	for p := range c.peers {
		if c.peers[p].available {
			c.resetGroup(p)
		} else {
			c.peers[p].resetOnResume = true
		}
	}
}

func (c *core) standby(reason string) {
	for p := range c.peers {
		pr := &c.peers[p]
		pr.resetOnResume = false
		clear(pr.pausedGRAs)
		for ci := pr.first; ci < pr.first+pr.count; ci++ {
			cc := &c.circuits[ci]
			if cl := cc.call; cl != nil {
				c.endCall(cl, Released{Cause: isup.CauseTemporaryFailure, Location: isup.LocationPublicLocal, Remote: true, Reason: reason})
			}
			for k := timerKind(0); k < numTimers; k++ {
				c.stopTimer(ci, k)
			}
			c.newEpoch(ci)
			cc.pend = 0
			cc.state = csIdle
			c.refresh(ci)
		}
	}
	clear(c.groupOps)
	clear(c.sentREL)
}
