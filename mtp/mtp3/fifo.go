package mtp3

import "sync"

// fifo hands items to a channel in the order pushed, from its own
// goroutine, so that the node never blocks on a slow reader while it holds
// its lock. wait lets a producer feel back-pressure outside that lock.
type fifo[T any] struct {
	mu     sync.Mutex
	cond   *sync.Cond
	q      []T
	limit  int
	closed bool
	out    chan T
	done   chan struct{}
}

func newFifo[T any](size int) *fifo[T] {
	f := &fifo[T]{limit: size, out: make(chan T, size), done: make(chan struct{})}
	f.cond = sync.NewCond(&f.mu)
	go f.run()
	return f
}

func (f *fifo[T]) push(v T) {
	f.mu.Lock()
	if !f.closed {
		f.q = append(f.q, v)
		f.cond.Broadcast()
	}
	f.mu.Unlock()
}

// wait blocks while more than limit items wait to be handed over.
func (f *fifo[T]) wait() {
	f.mu.Lock()
	for len(f.q) > f.limit && !f.closed {
		f.cond.Wait()
	}
	f.mu.Unlock()
}

func (f *fifo[T]) close() {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.done)
	}
	f.cond.Broadcast()
	f.mu.Unlock()
}

func (f *fifo[T]) run() {
	for {
		f.mu.Lock()
		for len(f.q) == 0 && !f.closed {
			f.cond.Wait()
		}
		if f.closed {
			f.mu.Unlock()
			return
		}
		batch := f.q
		f.q = nil
		f.cond.Broadcast()
		f.mu.Unlock()
		for _, v := range batch {
			select {
			case f.out <- v:
			case <-f.done:
				return
			}
		}
	}
}
