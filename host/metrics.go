package host

import (
	"sync"
	"sync/atomic"
)

// Metrics are the server's counters: plain atomics (and small labelled sets of
// them) that a Prometheus collector can read through Snapshot.
type Metrics struct {
	ConnectionsAccepted  atomic.Uint64 // TCP and Unix connections accepted
	ConnectionsOpen      atomic.Int64  // gauge
	HostsAuthenticated   atomic.Uint64 // successful hellos
	LinesTooLong         atomic.Uint64
	QueueDrops           atomic.Uint64 // messages not queued because a host's send queue was full
	MessagesSent         atomic.Uint64 // lines queued to hosts
	IncomingOffered      atomic.Uint64
	IncomingUnrouted     atomic.Uint64 // incoming calls released because no host took them
	ReleasedOnDisconnect atomic.Uint64 // calls released towards the network because their host went away
	AlarmsSent           atomic.Uint64 // alarm and alarm_cleared lines queued (one per host)
	OrphanEvents         atomic.Uint64 // stack events for calls no host owns any more
	ShareRefused         atomic.Uint64 // outseizes refused (0x0C) because their host had MaxPending requests waiting

	requests    labelled[string] // by request type ("invalid" when the line had none)
	naks        labelled[uint16] // by status
	disconnects labelled[string] // by reason
	events      labelled[string] // messages to hosts by type
}

// MetricsSnapshot is a copy of the counters at one moment.
type MetricsSnapshot struct {
	ConnectionsAccepted  uint64
	ConnectionsOpen      int64
	HostsAuthenticated   uint64
	LinesTooLong         uint64
	QueueDrops           uint64
	MessagesSent         uint64
	IncomingOffered      uint64
	IncomingUnrouted     uint64
	ReleasedOnDisconnect uint64
	AlarmsSent           uint64
	OrphanEvents         uint64
	ShareRefused         uint64
	Requests             map[string]uint64 // request type -> count
	Naks                 map[uint16]uint64 // status -> count
	Disconnects          map[string]uint64 // reason -> count
	Events               map[string]uint64 // message type -> count
}

// Snapshot copies every counter.
func (m *Metrics) Snapshot() MetricsSnapshot {
	return MetricsSnapshot{
		ConnectionsAccepted:  m.ConnectionsAccepted.Load(),
		ConnectionsOpen:      m.ConnectionsOpen.Load(),
		HostsAuthenticated:   m.HostsAuthenticated.Load(),
		LinesTooLong:         m.LinesTooLong.Load(),
		QueueDrops:           m.QueueDrops.Load(),
		MessagesSent:         m.MessagesSent.Load(),
		IncomingOffered:      m.IncomingOffered.Load(),
		IncomingUnrouted:     m.IncomingUnrouted.Load(),
		ReleasedOnDisconnect: m.ReleasedOnDisconnect.Load(),
		AlarmsSent:           m.AlarmsSent.Load(),
		OrphanEvents:         m.OrphanEvents.Load(),
		ShareRefused:         m.ShareRefused.Load(),
		Requests:             m.requests.snapshot(),
		Naks:                 m.naks.snapshot(),
		Disconnects:          m.disconnects.snapshot(),
		Events:               m.events.snapshot(),
	}
}

// labelled is a set of counters keyed by a label value. Labels are few (request
// types, statuses, reasons), so a map behind a read-write lock is enough; the
// counter itself is an atomic, so the hot path takes only the read lock.
type labelled[K comparable] struct {
	mu sync.RWMutex
	m  map[K]*atomic.Uint64
}

func (l *labelled[K]) add(k K) {
	l.mu.RLock()
	c := l.m[k]
	l.mu.RUnlock()
	if c == nil {
		l.mu.Lock()
		if l.m == nil {
			l.m = map[K]*atomic.Uint64{}
		}
		if c = l.m[k]; c == nil {
			c = new(atomic.Uint64)
			l.m[k] = c
		}
		l.mu.Unlock()
	}
	c.Add(1)
}

func (l *labelled[K]) snapshot() map[K]uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make(map[K]uint64, len(l.m))
	for k, c := range l.m {
		out[k] = c.Load()
	}
	return out
}
