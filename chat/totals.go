package chat

// Totals adds up a conversation's turns: prompt tokens, how many of them came from the
// prefix cache, and tokens generated.
type Totals struct {
	Turns, PromptTokens, ReusedTokens, GeneratedTokens int
}

// ReusedPercent is the share of prompt tokens served from the cache, in percent (0 when
// there were none).
func (t Totals) ReusedPercent() float64 {
	if t.PromptTokens == 0 {
		return 0
	}
	return 100 * float64(t.ReusedTokens) / float64(t.PromptTokens)
}

// Totals adds up the turns since the last Reset.
func (s *Session) Totals() Totals {
	t := Totals{Turns: len(s.turns)}
	for _, turn := range s.turns {
		t.PromptTokens += turn.PromptTokens
		t.ReusedTokens += turn.ReusedTokens
		t.GeneratedTokens += turn.GeneratedTokens
	}
	return t
}
