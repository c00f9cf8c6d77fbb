package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/internal/cachedir"
	"github.com/kvref/kvref/internal/hub"
	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/model/loader"
	"github.com/kvref/kvref/model/synth"
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

// goldenHint adds to an error from choosing a golden suite the flags of kvref golden that
// would make it work; other errors come back as they are.
func goldenHint(err error) error {
	var short *golden.WindowTooShortError
	switch {
	case errors.Is(err, golden.ErrNoWindow):
		return fmt.Errorf("%w; kvref synth --sliding-window 64 makes one, or record --suite default", err)
	case errors.As(err, &short):
		return fmt.Errorf("%w: record with --block-size %d or less", err, short.MaxBlockSize())
	}
	return err
}

// paramsHint says which flags of kvref golden set the golden.Params a skip reason names
// ("" when no reason names one).
func paramsHint(skipped []golden.Skipped) string {
	for _, s := range skipped {
		if strings.Contains(s.Reason, "Params.") {
			return "--cache-blocks sets Params.Blocks, --block-size Params.BlockSize, -c Params.Context"
		}
	}
	return ""
}

// openHint adds to an error from opening a model the flag that fixes it: --tokenizer for a
// file that may be a llama2.c checkpoint whose tokenizer.bin is elsewhere.
func openHint(err error) error {
	if errors.As(err, new(*loader.NoTokenizerError)) {
		return fmt.Errorf("%w; if it is a llama2.c checkpoint, pass its tokenizer with --tokenizer FILE", err)
	}
	return err
}

// pullHint adds to an error from kvref pull the flag that fixes it: --force for a cached
// file with the wrong checksum, --cache when there is no cache directory.
func pullHint(err error) error {
	switch {
	case errors.As(err, new(*hub.StaleCacheError)):
		return fmt.Errorf("%w with --force", err)
	case errors.Is(err, cachedir.ErrNoDir):
		return fmt.Errorf("%w; or give --cache DIR", err)
	}
	return err
}

// shapeHint adds to an error from kvref synth's shape the flag that fixes it.
func shapeHint(err error) error {
	if errors.As(err, new(*synth.HeadDimError)) {
		return fmt.Errorf("%w (or give --head-dim)", err)
	}
	return err
}

// presetHint adds to an unknown --preset where the presets are described.
func presetHint(err error) error {
	if errors.As(err, new(*plan.UnknownPresetError)) {
		return fmt.Errorf("%w (kvref plan --list describes them)", err)
	}
	return err
}
