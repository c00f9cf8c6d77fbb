package main

import (
	"errors"
	"fmt"

	"github.com/kvref/kvref/engine"
)

// engineHint adds to an error from the engine the flags that change the limit it names: -c
// for the context, --cache-blocks for the pool, and gen for the tokens to generate (the
// command's flag for it, "" when it has none). Other errors come back as they are. The
// engine's typed error stays reachable with errors.As.
func engineHint(err error, gen string) error {
	var (
		long  *engine.PromptTooLongError
		over  *engine.ContextExceededError
		small *engine.CacheTooSmallError
		full  *engine.CacheFullError
	)
	lower := ""
	if gen != "" {
		lower = "lower " + gen + " or "
	}
	var hint string
	switch {
	case errors.As(err, &long):
		hint = "shorten the prompt or raise -c"
	case errors.As(err, &over):
		hint = lower + "raise -c"
	case errors.As(err, &small):
		hint = "shorten the prompt or raise --cache-blocks"
	case errors.As(err, &full):
		hint = lower + "raise --cache-blocks"
	default:
		return err
	}
	return fmt.Errorf("%w; %s", err, hint)
}
