package golden

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoldenSummary: the counts in their columns, the reclaimed blocks only when any.
func TestGoldenSummary(t *testing.T) {
	g := &Golden{Scenario: Scenario{Name: "shared-prefix"},
		Requests: []GoldenRequest{{Choices: []GoldenChoice{{OutputIDs: []int{1, 2, 3}}, {OutputIDs: []int{4}}}}, {Choices: []GoldenChoice{{OutputIDs: []int{5, 6}}}}},
		Stats:    RunStats{Steps: 12, Preemptions: 1, Evictions: 3, PrefixHitTokens: 48}}
	require.Equal(t, "shared-prefix                       2 requests     6 tokens   12 steps,    48 prefix-hit tokens,   3 evictions, 1 preemptions", g.Summary())
	g.Stats.BlocksReclaimed = 5
	require.Equal(t, "shared-prefix                       2 requests     6 tokens   12 steps,    48 prefix-hit tokens,   3 evictions, 1 preemptions, 5 blocks reclaimed", g.Summary())
}
