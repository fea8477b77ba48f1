package m3ua

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// Heartbeat (RFC 4666 §4.3.4.6): a BEAT every interval; no BEAT ACK with
// the same data within the timeout means the peer is gone, and the
// association is restarted.

func (s *session) startBeat() {
	if s.e.beatInterval <= 0 {
		return
	}
	s.mu.Lock()
	if !s.ended {
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
	s.beatTimer = s.e.clock.AfterFunc(s.e.beatInterval, s.onBeatTick)
	if s.beatOut {
		s.mu.Unlock()
		return // still waiting for the last one
	}
	s.beatSeq++
	seq := s.beatSeq
	s.beatOut = true
	s.beatWait = s.e.clock.AfterFunc(s.e.beatTimeout, func() { s.onBeatTimeout(seq) })
	s.mu.Unlock()
	data := binary.BigEndian.AppendUint32(nil, seq)
	_ = s.write(marshal(messages.NewHeartbeat(params.NewHeartbeatData(data))), 0)
}

func (s *session) onBeatTimeout(seq uint32) {
	s.mu.Lock()
	late := s.beatOut && s.beatSeq == seq && !s.ended
	s.mu.Unlock()
	if late {
		s.e.stats.BeatTimeouts.Add(1)
		s.end("heartbeat timeout")
	}
}

func (s *session) handleBeatAck(m *messages.HeartbeatAck) {
	if m.HeartbeatData == nil || len(m.HeartbeatData.Data) != 4 {
		return // not one of ours
	}
	seq := binary.BigEndian.Uint32(m.HeartbeatData.Data)
	s.mu.Lock()
	if s.beatOut && seq == s.beatSeq {
		s.beatOut = false
		if s.beatWait != nil {
			s.beatWait.Stop()
			s.beatWait = nil
		}
	}
	s.mu.Unlock()
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
