package mtp

import "fmt"

// Event is a status indication to the MTP user. The concrete types are
// Pause, Resume, Restricted, Congestion, UserPartUnavailable and PeerState.
type Event interface {
	fmt.Stringer
	event()
}

// Pause is MTP-PAUSE: the point code is unreachable through Peer (M3UA
// DUNA). Mask > 0 covers a range of point codes (RFC 4666 §3.4.1).
type Pause struct {
	Peer string
	PC   PointCode
	Mask uint8
}

// Resume is MTP-RESUME: the point code is reachable again (M3UA DAVA).
type Resume struct {
	Peer string
	PC   PointCode
	Mask uint8
}

// Restricted says the route to the point code is restricted (M3UA DRST);
// traffic may continue but an alternative should be preferred.
type Restricted struct {
	Peer string
	PC   PointCode
	Mask uint8
}

// Congestion is MTP-STATUS (congestion) from M3UA SCON. Level is 0..3;
// ITU networks send no level, which arrives as 1 with LevelGiven false.
type Congestion struct {
	Peer       string
	PC         PointCode
	Level      uint8
	LevelGiven bool
}

// UserPartUnavailable is MTP-STATUS (user part unavailable) from M3UA DUPU.
type UserPartUnavailable struct {
	Peer  string
	PC    PointCode
	User  uint8 // service indicator of the user part (5 = ISUP)
	Cause UPUCause
}

// UPUCause is the DUPU cause (RFC 4666 §3.4.5).
type UPUCause uint16

// UPU causes.
const (
	UPUUnknown            UPUCause = 0
	UPUUnequippedRemote   UPUCause = 1
	UPUInaccessibleRemote UPUCause = 2
)

// PeerState reports an association's M3UA state change, so the user knows
// when traffic can flow (Active) and when a peer was lost.
type PeerState struct {
	Peer   string
	State  string // "down", "inactive", "active"
	Reason string
}

func (Pause) event()               {}
func (Resume) event()              {}
func (Restricted) event()          {}
func (Congestion) event()          {}
func (UserPartUnavailable) event() {}
func (PeerState) event()           {}

func (e Pause) String() string               { return EventText(e, PointCodeFormat{}) }
func (e Resume) String() string              { return EventText(e, PointCodeFormat{}) }
func (e Restricted) String() string          { return EventText(e, PointCodeFormat{}) }
func (e Congestion) String() string          { return EventText(e, PointCodeFormat{}) }
func (e UserPartUnavailable) String() string { return EventText(e, PointCodeFormat{}) }

// EventText describes an event for the log, its point code written in f
// (String writes numbers).
func EventText(ev Event, f PointCodeFormat) string {
	switch e := ev.(type) {
	case Pause:
		return fmt.Sprintf("pause pc=%s/%d via %s", f.Format(e.PC), e.Mask, e.Peer)
	case Resume:
		return fmt.Sprintf("resume pc=%s/%d via %s", f.Format(e.PC), e.Mask, e.Peer)
	case Restricted:
		return fmt.Sprintf("restricted pc=%s/%d via %s", f.Format(e.PC), e.Mask, e.Peer)
	case Congestion:
		return fmt.Sprintf("congestion pc=%s level=%d via %s", f.Format(e.PC), e.Level, e.Peer)
	case UserPartUnavailable:
		return fmt.Sprintf("user part %d unavailable at pc=%s cause=%d via %s", e.User, f.Format(e.PC), e.Cause, e.Peer)
	}
	return ev.String()
}
func (e PeerState) String() string {
	return fmt.Sprintf("peer %s %s (%s)", e.Peer, e.State, e.Reason)
}
