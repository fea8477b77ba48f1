package m3ua

import (
	"github.com/isupgw/isupgw/mtp"
	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// handleSSNM turns DUNA, DAVA, DRST, SCON and DUPU into MTP indications and
// answers DAUD. An SG accepts from its ASPs only DAUD, SCON and DUPU
// (RFC 4666 §1.4.2.3); anything else is unexpected there.
func (s *session) handleSSNM(b []byte, msg messages.M3UA) {
	a := s.peer.Load()
	if a == nil {
		s.unexpected(b) // the peer has not said who it is yet
		return
	}
	sg := s.e.cfg.Role == RoleSG
	var apcP *params.Param
	switch m := msg.(type) {
	case *messages.DestinationUnavailable:
		apcP = m.AffectedPointCode
	case *messages.DestinationAvailable:
		apcP = m.AffectedPointCode
	case *messages.DestinationRestricted:
		apcP = m.AffectedPointCode
	case *messages.DestinationStateAudit:
		apcP = m.AffectedPointCode
	case *messages.SignallingCongestion:
		apcP = m.AffectedPointCode
	case *messages.DestinationUserPartUnavailable:
		apcP = m.AffectedPointCode
	default:
		s.e.stats.Malformed.Add(1)
		s.sendErrFor(b, ErrUnsupportedType)
		return
	}
	if apcP == nil {
		s.e.stats.Malformed.Add(1)
		s.sendErrFor(b, ErrMissingParam)
		return
	}
	apcs, ok := u32s(apcP)
	if !ok {
		s.e.stats.Malformed.Add(1)
		s.sendErrFor(b, ErrParamField)
		return
	}
	name := a.cfg.Name
	switch m := msg.(type) {
	case *messages.DestinationUnavailable, *messages.DestinationAvailable, *messages.DestinationRestricted:
		if sg {
			s.unexpected(b)
			return
		}
		for _, v := range apcs {
			pc, mask := mtp.PointCode(v&0xffffff), uint8(v>>24)
			switch msg.(type) {
			case *messages.DestinationUnavailable:
				s.e.table.SetProhibited(name, pc, mask, true)
				s.e.emit(mtp.Pause{Peer: name, PC: pc, Mask: mask})
			case *messages.DestinationAvailable:
				s.e.table.SetProhibited(name, pc, mask, false)
				s.e.emit(mtp.Resume{Peer: name, PC: pc, Mask: mask})
			default:
				s.e.emit(mtp.Restricted{Peer: name, PC: pc, Mask: mask})
			}
		}
	case *messages.DestinationStateAudit:
		if !s.passive {
			s.unexpected(b)
			return
		}
		// We know of no unavailable destination behind us: all available.
		_ = s.write(marshal(messages.NewDestinationAvailable(m.NetworkAppearance, m.RoutingContext, apcP, nil)), 0)
	case *messages.SignallingCongestion:
		level, given := uint8(1), false
		if m.CongestionIndications != nil {
			v, ok := u32(m.CongestionIndications)
			if !ok || v&0xff > 3 {
				s.e.stats.Malformed.Add(1)
				s.sendErrFor(b, ErrInvalidParamValue)
				return
			}
			level, given = uint8(v&0xff), true
		}
		for _, v := range apcs {
			s.e.emit(mtp.Congestion{Peer: name, PC: mtp.PointCode(v & 0xffffff), Level: level, LevelGiven: given})
		}
	case *messages.DestinationUserPartUnavailable:
		uc, ok := u32(m.UserCause)
		if !ok {
			s.e.stats.Malformed.Add(1)
			s.sendErrFor(b, ErrMissingParam)
			return
		}
		for _, v := range apcs {
			s.e.emit(mtp.UserPartUnavailable{Peer: name, PC: mtp.PointCode(v & 0xffffff),
				User: uint8(uc & 0xffff), Cause: mtp.UPUCause(uc >> 16)})
		}
	}
}
