package host

import (
	"bufio"
	"sync"
)

// sendQueue is a host's bounded queue of lines to send. It holds only what is
// queued, so a connection that is sent nothing costs no queue memory whatever
// the bound (a channel of the bound's size would be allocated whole for every
// connection: 1.5 MB each with a 65536-line queue).
type sendQueue struct {
	mu    sync.Mutex
	lines [][]byte
	spare [][]byte // the array of the writer's last batch, for reuse
	limit int
	// answers counts the lines queued that answer a pending request.
	answers int
	// closing asks the writer to send what is queued and then close the
	// connection (after a fatal nak).
	closing bool
	wake    chan struct{} // capacity 1: something to do
}

// spareMax is the largest batch array kept for reuse; a burst's larger array
// goes back to the garbage collector once sent.
const spareMax = 256

func newSendQueue(limit int) *sendQueue {
	return &sendQueue{limit: limit, wake: make(chan struct{}, 1)}
}

// push queues a line without waiting (answer: it answers a pending
// request); false means the queue is full.
func (q *sendQueue) push(line []byte, answer bool) bool {
	q.mu.Lock()
	if len(q.lines) >= q.limit {
		q.mu.Unlock()
		return false
	}
	q.lines = append(q.lines, line)
	if answer {
		q.answers++
	}
	first := len(q.lines) == 1
	q.mu.Unlock()
	if first { // the writer takes everything at once: only the first needs waking
		q.signal()
	}
	return true
}

// closeAfterQueued asks the writer to close once it has sent what is queued.
func (q *sendQueue) closeAfterQueued() {
	q.mu.Lock()
	q.closing = true
	q.mu.Unlock()
	q.signal()
}

func (q *sendQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take hands the writer everything queued, how many of the lines answer
// pending requests, and whether to close after it.
func (q *sendQueue) take() (batch [][]byte, answers int, closing bool) {
	q.mu.Lock()
	batch, q.lines, q.spare = q.lines, q.spare, nil
	answers, q.answers = q.answers, 0
	closing = q.closing
	q.mu.Unlock()
	return batch, answers, closing
}

// recycle gives back a sent batch's array.
func (q *sendQueue) recycle(batch [][]byte) {
	if cap(batch) > spareMax {
		return
	}
	clear(batch) // the lines themselves are garbage now
	q.mu.Lock()
	if q.spare == nil {
		q.spare = batch[:0]
	}
	q.mu.Unlock()
}

// writers are the writers' buffers, shared: a connection holds one only while
// it has lines to write, so idle connections hold none.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32<<10) }}
