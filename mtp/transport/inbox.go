package transport

import (
	"net"
	"sync"
)

// inbox is one association's share of a socket that several associations use
// (a UDP listener, the raw IP socket): the demultiplexer queues packets into it
// and the association's SCTP stack reads them.
type inbox struct {
	q    chan []byte
	done chan struct{}
	once sync.Once
}

func (in *inbox) init() {
	in.q, in.done = make(chan []byte, peerQueue), make(chan struct{})
}

// push queues a copy of pkt. A full queue drops it, as a socket buffer would;
// SCTP retransmits.
func (in *inbox) push(pkt []byte) {
	b := append([]byte(nil), pkt...)
	select {
	case in.q <- b:
	case <-in.done:
	default:
	}
}

func (in *inbox) readPacket(b []byte) (int, error) {
	select {
	case pkt := <-in.q:
		return copy(b, pkt), nil
	case <-in.done:
		return 0, net.ErrClosed
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
