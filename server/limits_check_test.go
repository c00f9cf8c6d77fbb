package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLimitsCheck: the defaults pass; each non-positive limit, and choices or a queue too
// small for the largest request, are refused with the flag's name.
func TestLimitsCheck(t *testing.T) {
	ok := Limits{}.withDefaults()
	require.NoError(t, ok.Check())
	for _, tc := range []struct {
		set  func(*Limits)
		want string
	}{
		{func(l *Limits) { l.MaxLogprobs = 0 }, "--max-logprobs must be ≥ 1, got 0"},
		{func(l *Limits) { l.StreamBacklog = -3 }, "--stream-backlog must be ≥ 1, got -3"},
		{func(l *Limits) { l.StallTimeout = 0 }, "--stall-timeout must be positive, got 0s"},
		{func(l *Limits) { l.ReadTimeout = -time.Second }, "--read-timeout must be positive, got -1s"},
		{func(l *Limits) { l.MaxChoices = l.MaxPrompts - 1 }, "--max-choices (63) must be at least --max-prompts (64)"},
		{func(l *Limits) { l.MaxQueue = l.MaxChoices - 1 }, "--max-queue (255) must be at least --max-choices (256)"},
	} {
		l := ok
		tc.set(&l)
		require.ErrorContains(t, l.Check(), tc.want)
	}
}
