package m3ua

import (
	"github.com/isupgw/isupgw/mtp"
	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// Builders for the messages this endpoint sends, on the messages codec.

func (s *session) rcParam() *params.Param {
	if a := s.peer.Load(); a != nil && len(a.cfg.RoutingContexts) > 0 {
		return params.NewRoutingContext(a.cfg.RoutingContexts...)
	}
	return nil
}

func (s *session) naParam() *params.Param {
	if s.e.cfg.HasNetworkAppearance {
		return params.NewNetworkAppearance(s.e.cfg.NetworkAppearance)
	}
	return nil
}

func (s *session) aspIDParam() *params.Param {
	if a := s.peer.Load(); a != nil && a.cfg.HasASPID {
		return params.NewAspIdentifier(a.cfg.ASPID)
	}
	return nil
}

func (s *session) aspUp() []byte {
	return marshal(messages.NewAspUp(s.aspIDParam(), nil))
}

func (s *session) aspActive() []byte {
	mode := mtp.Loadshare
	if a := s.peer.Load(); a != nil {
		mode = a.cfg.TrafficMode
	}
	return marshal(messages.NewAspActive(params.NewTrafficModeType(uint32(mode)), s.rcParam(), nil))
}

func (s *session) aspInactive() []byte {
	return marshal(messages.NewAspInactive(s.rcParam(), nil))
}

func marshalAspDown() []byte { return marshal(messages.NewAspDown(nil)) }

// NTFY status (RFC 4666 §3.8.2).
const (
	statusASChange = 1
	statusOther    = 2
	asInactive     = 2
	asActive       = 3
	asPending      = 4
	otherAltActive = 2
)

func (s *session) notify(typ, info uint16, aspID *params.Param, rc *params.Param) []byte {
	return marshal(messages.NewNotify(params.NewStatus(uint32(typ)<<16|uint32(info)), aspID, rc, nil))
}

// encodeSSNM turns an MTP status event into the SSNM message for a peer.
func (s *session) encodeSSNM(ev mtp.Event) ([]byte, error) {
	na, rc := s.naParam(), s.rcParam()
	apc := func(pc mtp.PointCode, mask uint8) *params.Param {
		return params.NewAffectedPointCode(uint32(mask)<<24 | uint32(pc)&0xffffff)
	}
	switch v := ev.(type) {
	case mtp.Pause:
		return marshal(messages.NewDestinationUnavailable(na, rc, apc(v.PC, v.Mask), nil)), nil
	case mtp.Resume:
		return marshal(messages.NewDestinationAvailable(na, rc, apc(v.PC, v.Mask), nil)), nil
	case mtp.Restricted:
		return marshal(messages.NewDestinationRestricted(na, rc, apc(v.PC, v.Mask), nil)), nil
	case mtp.Congestion:
		var ind *params.Param
		if v.LevelGiven {
			ind = params.NewCongestionIndications(v.Level)
		}
		return marshal(messages.NewSignallingCongestion(na, rc, apc(v.PC, 0), nil, ind, nil)), nil
	case mtp.UserPartUnavailable:
		return marshal(messages.NewDestinationUserPartUnavailable(na, rc, apc(v.PC, 0),
			params.NewUserCause(uint16(v.User), uint16(v.Cause)), nil)), nil
	}
	return nil, ErrConfig
}
