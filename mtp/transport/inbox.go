package transport

import (
	"net"
	"sync"
)

// inbox is one association's share of a socket that several associations use
// (a UDP listener, the raw IP socket): the demultiplexer queues packets into it
// and the association's SCTP stack reads them. The queue starts empty and
// grows with the backlog up to peerQueue packets, so an idle association
// costs a few bytes, not a full window of slots.
type inbox struct {
	mu    sync.Mutex
	q     [][]byte
	head  int
	ready chan struct{} // one token: the queue may have packets
	done  chan struct{}
	once  sync.Once
}

func (in *inbox) init() {
	in.ready, in.done = make(chan struct{}, 1), make(chan struct{})
}

// push queues a copy of pkt. A full queue drops it, as a socket buffer would;
// SCTP retransmits.
func (in *inbox) push(pkt []byte) {
	if in.closedErr() != nil {
		return
	}
	b := append([]byte(nil), pkt...)
	in.mu.Lock()
	if len(in.q)-in.head >= peerQueue {
		in.mu.Unlock()
		return
	}
	if in.head > 0 && len(in.q) == cap(in.q) {
		// Reuse the consumed front before growing.
		n := copy(in.q, in.q[in.head:])
		clear(in.q[n:])
		in.q, in.head = in.q[:n], 0
	}
	in.q = append(in.q, b)
	in.mu.Unlock()
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

func (in *inbox) readPacket(b []byte) (int, error) {
	for {
		in.mu.Lock()
		if in.head < len(in.q) {
			pkt := in.q[in.head]
			in.q[in.head] = nil
			if in.head++; in.head == len(in.q) {
				in.q, in.head = in.q[:0], 0
			}
			in.mu.Unlock()
			return copy(b, pkt), nil
		}
		in.mu.Unlock()
		select {
		case <-in.ready:
		case <-in.done:
			return 0, net.ErrClosed
		}
	}
}

// closedErr is net.ErrClosed once the inbox is shut, else nil.
func (in *inbox) closedErr() error {
	select {
	case <-in.done:
		return net.ErrClosed
	default:
		return nil
	}
}
