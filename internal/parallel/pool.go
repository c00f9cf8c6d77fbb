// Package parallel runs loops over output rows on a fixed set of long-lived worker goroutines.
//
// Work is only ever split by output index, never across a reduction, so the result of a
// parallel loop is bit-identical to the serial loop whatever the number of threads.
//
// # Waking workers
//
// A decode step is a few hundred short parallel loops separated by a few microseconds of
// serial work (norms, RoPE, sampling). Waking a parked goroutine costs tens of microseconds,
// which at that rate is a large share of a step, so an idle worker first spins on its
// mailbox for a while (spinFor) and only then parks; a loop issued while it spins starts
// within a cache-line transfer. The caller likewise spins while it waits for the others to
// finish before it parks. Spinning is bounded in time, so an idle pool costs no CPU.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinFor is how long an idle worker (or a waiting caller) polls before it parks.
const spinFor = 200 * time.Microsecond

// Pool is a persistent set of worker goroutines. The zero value is not usable; call NewPool.
// A Pool runs one For at a time; concurrent calls are serialised.
type Pool struct {
	threads int
	yield   bool       // more threads than processors: spinners must yield
	mu      sync.Mutex // serialises For and Close
	workers []*worker
	closed  bool

	pending atomic.Int32  // workers still running the current loop
	waiting atomic.Bool   // the caller has parked on done
	done    chan struct{} // capacity 1: the last worker to finish wakes a parked caller
}

// worker is one goroutine's mailbox. The caller writes task, then bumps posted; the worker
// runs a task when posted moves past the last one it ran.
type worker struct {
	task     task
	posted   atomic.Uint64
	sleeping atomic.Bool
	yield    bool
	wake     chan struct{} // capacity 1
	_        [64]byte      // keep mailboxes on separate cache lines
}

type task struct {
	loop *loop
	quit bool
}

// NewPool starts a pool of threads workers (threads ≤ 0 means runtime.NumCPU()). The
// calling goroutine counts as one worker, so threads-1 goroutines are started.
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	p := &Pool{threads: threads, yield: threads > runtime.GOMAXPROCS(0), done: make(chan struct{}, 1)}
	for i := 1; i < threads; i++ {
		w := &worker{wake: make(chan struct{}, 1), yield: p.yield}
		p.workers = append(p.workers, w)
		go p.run(w)
	}
	return p
}

// run is a worker's loop: wait for the next posted task, run it, report it done.
func (p *Pool) run(w *worker) {
	var seen uint64
	for {
		seen = w.await(seen)
		t := w.task
		if t.quit {
			return
		}
		t.loop.run()
		if p.pending.Add(-1) == 0 && p.waiting.Load() {
			select {
			case p.done <- struct{}{}:
			default:
			}
		}
	}
}

// await returns once posted has moved past seen, spinning first and parking after spinFor.
// Parking is race-free: the worker announces it sleeps before its last look at posted,
// and the poster bumps posted before it looks at sleeping, so one of them sees the other.
// A wake-up token left over from a race is harmless: the loop looks again.
func (w *worker) await(seen uint64) uint64 {
	if spinUntil(func() bool { return w.posted.Load() != seen }, w.yield) {
		return w.posted.Load()
	}
	for {
		w.sleeping.Store(true)
		if v := w.posted.Load(); v != seen {
			w.sleeping.Store(false)
			return v
		}
		<-w.wake
		w.sleeping.Store(false)
		if v := w.posted.Load(); v != seen {
			return v
		}
	}
}

// post hands t to w.
func (w *worker) post(t task) {
	w.task = t
	w.posted.Add(1)
	if w.sleeping.Load() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// spinUntil polls cond for up to spinFor and reports whether it became true. With yield it
// gives up its processor now and then, for pools with more threads than GOMAXPROCS.
func spinUntil(cond func() bool, yield bool) bool {
	var deadline time.Time
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		if i&255 == 255 {
			now := time.Now()
			if deadline.IsZero() {
				deadline = now.Add(spinFor)
			} else if now.After(deadline) {
				return false
			}
			if yield {
				runtime.Gosched() // more spinners than processors: let the others progress
			}
		}
	}
}

// Threads reports how many workers (including the caller) share a loop.
func (p *Pool) Threads() int { return p.threads }

// For calls fn on disjoint sub-ranges [start, end) that together cover [0, n), spread over
// the pool's workers, and returns when all have finished. Ranges are multiples of minChunk
// items (but the last), so loops of at most minChunk items run on the caller alone.
//
// The participants (the caller included) claim ranges from a shared counter until none is
// left, each claim taking a share of what remains (guided scheduling): large ranges first,
// then smaller and smaller ones, so that all threads run out of work at nearly the same
// moment, and a thread slowed down by another process does less of the loop instead of
// holding up the others. Which thread computes which range varies from call to call; what
// each index computes does not.
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
	chunks := (n + minChunk - 1) / minChunk
	if chunks <= 1 || p.threads == 1 {
		fn(0, n)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		fn(0, n)
		return
	}
	l := &loop{fn: fn, n: n, chunk: minChunk, share: 2 * p.threads}
	helpers := min(len(p.workers), chunks-1)
	p.pending.Store(int32(helpers))
	for _, w := range p.workers[:helpers] {
		w.post(task{loop: l})
	}
	l.run()
	p.wait()
}

// loop is one For call's shared state: the next unclaimed index, and how claims are sized.
type loop struct {
	fn    func(start, end int)
	n     int
	chunk int // claims are whole multiples of chunk items, except at the end
	share int // a claim takes 1/share of what remains (at least one chunk)
	next  atomic.Int64
}

// run claims and runs ranges until none is left.
func (l *loop) run() {
	for {
		start := int(l.next.Load())
		if start >= l.n {
			return
		}
		chunks := max(1, (l.n-start)/(l.share*l.chunk))
		end := min(start+chunks*l.chunk, l.n)
		if l.next.CompareAndSwap(int64(start), int64(end)) {
			l.fn(start, end)
		}
	}
}

// wait returns when every worker has finished the current loop: it spins, then parks on
// done. The same announce-then-look order as worker.await makes the hand-off race-free.
func (p *Pool) wait() {
	if spinUntil(func() bool { return p.pending.Load() == 0 }, p.yield) {
		return
	}
	for {
		p.waiting.Store(true)
		if p.pending.Load() == 0 {
			p.waiting.Store(false)
			select { // drop a token a finishing worker may have left
			case <-p.done:
			default:
			}
			return
		}
		<-p.done
		p.waiting.Store(false)
		if p.pending.Load() == 0 {
			return
		}
	}
}

// Close stops the workers. Loops issued afterwards run on the caller alone.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	for _, w := range p.workers {
		w.post(task{quit: true})
	}
}
