// Package promptrun runs prompts through one engine's scheduler, as kvref run does: one
// after another, each to its end before the next is submitted, or all together
// (continuous batching).
package promptrun

import (
	"fmt"
	"os"
	"strings"

	"github.com/kvref/kvref/engine"
)

// Runner runs requests through Sched and hands out their tokens and results by the
// index of the request.
type Runner struct {
	Sched *engine.Scheduler
	// Parallel submits every request first and runs them together; otherwise each runs to
	// its end before the next is submitted.
	Parallel bool
	// Start, when set, is called before request i is submitted.
	Start func(i int)
	// Emit receives every token, with the index of its request.
	Emit func(i int, t engine.Token) error
	// Done receives request i's result once it has ended: at once when the requests run
	// one by one, in order after all have ended when Parallel.
	Done func(i int, res engine.Result) error
	// AfterStep, when set, runs after every scheduler step (tests corrupt a cache entry
	// there).
	AfterStep func()
	// AddHint and ErrHint, when set, rewrite the error of Scheduler.Add and the error a
	// request ended with (to add what would avoid it).
	AddHint, ErrHint func(error) error
}

// Run submits reqs and runs them to their ends. An error names its request as "prompt I".
func (r Runner) Run(reqs []engine.Request) error {
	index := map[int]int{} // scheduler id → request index
	emit := func(t engine.Token) error { return r.Emit(index[t.Request], t) }
	steps := func() error {
		for !r.Sched.Done() {
			if err := r.Sched.EmitStep(emit); err != nil {
				return err
			}
			if r.AfterStep != nil {
				r.AfterStep()
			}
		}
		return nil
	}
	finish := func(id int) error {
		i := index[id]
		if err := r.Sched.Err(id); err != nil {
			return fmt.Errorf("prompt %d: %w", i, hint(r.ErrHint, err))
		}
		return r.Done(i, r.Sched.Result(id))
	}
	var ids []int
	for i, req := range reqs {
		if r.Start != nil {
			r.Start(i)
		}
		id, err := r.Sched.Add(req)
		if err != nil {
			return fmt.Errorf("prompt %d: %w", i, hint(r.AddHint, err))
		}
		index[id] = i
		ids = append(ids, id)
		if r.Parallel {
			continue
		}
		if err := steps(); err != nil {
			return err
		}
		if err := finish(id); err != nil {
			return err
		}
	}
	if !r.Parallel {
		return nil
	}
	if err := steps(); err != nil {
		return err
	}
	for _, id := range ids {
		if err := finish(id); err != nil {
			return err
		}
	}
	return nil
}

// hint applies h to err when h is set.
func hint(h func(error) error, err error) error {
	if h == nil {
		return err
	}
	return h(err)
}

// ReadFile reads the prompts of a file, one per line (\r\n line ends too); blank lines
// are skipped, and a file without a prompt is an error.
func ReadFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var prompts []string
	for _, line := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) != "" {
			prompts = append(prompts, line)
		}
	}
	if len(prompts) == 0 {
		return nil, fmt.Errorf("%s has no prompts (one per line expected)", path)
	}
	return prompts, nil
}
