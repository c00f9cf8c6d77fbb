package server

import (
	"fmt"
	"time"
)

// Check requires every limit to be positive, MaxChoices to be at least MaxPrompts and
// MaxQueue at least MaxChoices. A limit of 0 or less would be no limit, or refuse
// everything; Options take such a field as its default, so Check is for a caller that sets
// every field (kvref serve's flags). MaxBodyBytes is not checked: 0 means the default. The
// error names the limit by kvref serve's flag, as the server's own errors do.
func (l Limits) Check() error {
	for _, c := range []struct {
		flag string
		v    int
	}{
		{"--max-logprobs", l.MaxLogprobs}, {"--max-prompts", l.MaxPrompts}, {"--max-choices", l.MaxChoices},
		{"--max-queue", l.MaxQueue}, {"--max-stops", l.MaxStops}, {"--max-stop-bytes", l.MaxStopBytes},
		{"--max-stop-ids", l.MaxStopIDs}, {"--max-salt-bytes", l.MaxSaltBytes}, {"--stream-backlog", l.StreamBacklog},
		{"--max-messages", l.MaxMessages}, {"--max-content-parts", l.MaxContentParts},
		{"--max-template-kwargs", l.MaxKwargs}, {"--max-template-kwargs-bytes", l.MaxKwargsBytes},
	} {
		if c.v < 1 {
			return fmt.Errorf("%s must be ≥ 1, got %d", c.flag, c.v)
		}
	}
	for _, c := range []struct {
		flag string
		v    time.Duration
	}{
		{"--read-timeout", l.ReadTimeout}, {"--write-timeout", l.WriteTimeout}, {"--idle-timeout", l.IdleTimeout},
		{"--request-timeout", l.RequestTimeout}, {"--stall-timeout", l.StallTimeout},
	} {
		if c.v <= 0 {
			return fmt.Errorf("%s must be positive, got %s", c.flag, c.v)
		}
	}
	if l.MaxChoices < l.MaxPrompts {
		return fmt.Errorf("--max-choices (%d) must be at least --max-prompts (%d): every prompt has at least one choice", l.MaxChoices, l.MaxPrompts)
	}
	if l.MaxQueue < l.MaxChoices {
		return fmt.Errorf("--max-queue (%d) must be at least --max-choices (%d), or the largest request could never run", l.MaxQueue, l.MaxChoices)
	}
	return nil
}
