package m3ua

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// Heartbeat (RFC 4666 §4.3.4.6): a BEAT every interval, which the peer
// answers with BEAT ACK. A peer from which nothing at all has been heard (BEAT
// ACK or any other message) for the timeout is dead (killed) or hung
// (stopped, looping): the association is aborted, the user told (down: its
// destinations pause), and a dialling side reconnects. Any message counts as
// a sign of life, so a peer busy with traffic, whose BEAT ACK waits behind its
// DATA, is not declared dead; a peer that sends nothing is, within interval +
// timeout of its last message (checked at each tick).

func (s *session) startBeat() {
	if s.e.beatInterval <= 0 {
		return
	}
	s.mu.Lock()
	if !s.ended {
		s.heard = s.e.clock.Now()
		s.beatTimer = s.e.clock.AfterFunc(s.e.beatInterval, s.onBeatTick)
	}
	s.mu.Unlock()
}

func (s *session) onBeatTick() {
	s.mu.Lock()
	if s.ended || s.beatTimer == nil {
		s.mu.Unlock()
		return
	}
	now := s.e.clock.Now()
	if rx := s.rx.Load(); rx != s.rxSeen {
		s.rxSeen, s.heard = rx, now
	}
	if now.Sub(s.heard) >= s.e.beatTimeout {
		s.mu.Unlock()
		s.e.stats.BeatTimeouts.Add(1)
		s.end("heartbeat timeout")
		return
	}
	s.beatTimer = s.e.clock.AfterFunc(s.e.beatInterval, s.onBeatTick)
	s.beatSeq++
	data := binary.BigEndian.AppendUint32(nil, s.beatSeq)
	s.mu.Unlock()
	_ = s.write(marshal(messages.NewHeartbeat(params.NewHeartbeatData(data))), 0)
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
