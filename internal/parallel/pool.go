// Package parallel runs loops over output rows on a fixed set of long-lived worker goroutines.
//
// Work is only ever split by output index, never across a reduction, so the result of a
// parallel loop is bit-identical to the serial loop whatever the number of threads.
package parallel

import (
	"runtime"
	"sync"
)

// Pool is a persistent set of worker goroutines. The zero value is not usable; call NewPool.
// A Pool runs one For at a time; concurrent calls are serialised.
type Pool struct {
	threads int
	mu      sync.Mutex
	work    chan task
	wg      sync.WaitGroup
	closed  bool
}

type task struct {
	fn         func(start, end int)
	start, end int
}

// NewPool starts a pool of threads workers (threads ≤ 0 means runtime.NumCPU()). The
// calling goroutine counts as one worker, so threads-1 goroutines are started.
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	p := &Pool{threads: threads, work: make(chan task)}
	for i := 1; i < threads; i++ {
		go p.worker()
	}
	return p
}

func (p *Pool) worker() {
	for t := range p.work {
		t.fn(t.start, t.end)
		p.wg.Done()
	}
}

// Threads reports how many workers (including the caller) share a loop.
func (p *Pool) Threads() int { return p.threads }

// For calls fn on disjoint sub-ranges [start, end) that together cover [0, n), spread over
// the pool's workers, and returns when all have finished. Ranges smaller than minChunk
// items are not split further, so tiny loops run on the caller alone.
func (p *Pool) For(n, minChunk int, fn func(start, end int)) {
	if n <= 0 {
		return
	}
	if p == nil {
		fn(0, n)
		return
	}
	if minChunk < 1 {
		minChunk = 1
	}
	parts := p.threads
	if max := (n + minChunk - 1) / minChunk; parts > max {
		parts = max
	}
	if parts <= 1 {
		fn(0, n)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	chunk := (n + parts - 1) / parts
	p.wg.Add(parts - 1)
	for i := 1; i < parts; i++ {
		start := i * chunk
		end := min(start+chunk, n)
		if start >= end {
			p.wg.Done()
			continue
		}
		p.work <- task{fn: fn, start: start, end: end}
	}
	fn(0, min(chunk, n))
	p.wg.Wait()
}

// Close stops the workers. The pool must not be used afterwards.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.work)
	}
}
