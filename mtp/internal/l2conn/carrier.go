// Package l2conn carries a signalling link's units over one connection at a
// time (an SCTP association for M2PA, a SOCK_SEQPACKET socket for MTP2):
// the link state machine queues what it sends without blocking, a writer
// goroutine writes it, and a read loop feeds what arrives back in.
package l2conn

import "sync"

// Packet is one unit to write; Stream is the SCTP stream (M2PA), unused
// by MTP2.
type Packet struct {
	B      []byte
	Stream uint16
}

// Conn is one connection. Read returns one unit; Write writes one.
type Conn interface {
	Read(buf []byte) (int, error)
	Write(p Packet) error
	Close() error
}

// Carrier holds the current connection and what waits to be written on it.
type Carrier struct {
	mu     sync.Mutex
	conn   Conn
	gen    uint64 // counts connections: the writer of an old one stops
	outbox []Packet
	kick   chan struct{}
}

// New returns a carrier with no connection.
func New() *Carrier { return &Carrier{kick: make(chan struct{}, 1)} }

// Enqueue queues p for the current connection (dropped when there is
// none). It never blocks, so the state machine may call it under its lock.
func (c *Carrier) Enqueue(p Packet) {
	c.mu.Lock()
	if c.conn != nil {
		c.outbox = append(c.outbox, p)
	}
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Close closes the current connection, if any; Serve then returns.
func (c *Carrier) Close() {
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	if conn != nil {
		_ = conn.Close()
	}
}

// Serve makes conn the current connection and runs it until reading fails:
// up is called once the writer runs, receive for every unit read (b is only
// valid during the call). It closes conn and returns the read error.
func (c *Carrier) Serve(conn Conn, bufLen int, up func(), receive func(b []byte)) error {
	c.mu.Lock()
	c.conn, c.outbox = conn, nil
	c.gen++
	gen := c.gen
	c.mu.Unlock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); c.writeLoop(conn, gen, done) }()
	up()
	buf := make([]byte, bufLen)
	var err error
	for {
		var n int
		if n, err = conn.Read(buf); err != nil {
			break
		}
		receive(buf[:n])
	}
	c.mu.Lock()
	c.conn, c.outbox = nil, nil
	c.mu.Unlock()
	close(done)
	_ = conn.Close()
	wg.Wait()
	return err
}

func (c *Carrier) writeLoop(conn Conn, gen uint64, done chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-c.kick:
		}
		c.mu.Lock()
		if c.gen != gen || c.conn == nil {
			c.mu.Unlock()
			return
		}
		batch := c.outbox
		c.outbox = nil
		c.mu.Unlock()
		for _, p := range batch {
			if err := conn.Write(p); err != nil {
				_ = conn.Close()
				return
			}
		}
	}
}
