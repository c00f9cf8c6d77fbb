package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/server"
)

// openAIClientDir holds the Node script and its lockfile (the official openai package).
const openAIClientDir = "server/testdata/openai-client"

// clientUsage is the usage object as the openai client returns it.
type clientUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// clientCheck is one line of the script's output.
type clientCheck struct {
	Check        string       `json:"check"`
	Object       string       `json:"object"`
	Role         string       `json:"role"`
	Content      string       `json:"content"`
	FinishReason string       `json:"finish_reason"`
	Chunks       int          `json:"chunks"`
	Usage        *clientUsage `json:"usage"`
	Indexes      []int        `json:"indexes"`
	Contents     []string     `json:"contents"`
	Tokens       []string     `json:"tokens"`
	Logprobs     []float64    `json:"logprobs"`
	TopCounts    []int        `json:"top_counts"`
	TopFirst     []float64    `json:"top_first"`
	TokenIDs     []int        `json:"token_ids"`
	Completion   int          `json:"completion_tokens"`
	Text         string       `json:"text"`
	Streamed     string       `json:"streamed"`
	First        *clientUsage `json:"first"`
	Second       *clientUsage `json:"second"`
	Status       int          `json:"status"`
	Param        string       `json:"param"`
	Message      string       `json:"message"`
	EchoMiss     []*float64   `json:"echo_miss"`
	EchoHit      []*float64   `json:"echo_hit"`
	TextOffset   []int        `json:"text_offset"`
	PromptLogp   []*float64   `json:"prompt_logprobs"`
}

// TestOpenAINodeClient starts `kvref serve` on a free port and drives it with the official
// openai npm client (server/testdata/openai-client: client.mjs, openai pinned by
// package-lock.json, installed with npm ci when node_modules is missing; .ci/run does it
// first): chat streamed and not, n > 1, logprobs, completions.create, and a two-request
// conversation whose second request reports the history's blocks as cached tokens. The
// answers are checked against the same requests sent without the client.
func TestOpenAINodeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("the openai npm client check is a long suite: it runs in the full go test (.ci/run), not with -short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the openai npm client check needs Node.js and npm (apt-get install nodejs npm)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: the openai npm client check needs it to install the pinned openai package (apt-get install npm)")
	}
	dir := filepath.Join(testutil.ModuleRoot(t), openAIClientDir)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm ci in %s:\n%s", dir, out)
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var errb syncBuffer
	exited := make(chan error, 1)
	go func() {
		exited <- serve(ctx, func() {}, []string{"--port", "0", "-t", "2", "-c", "512", "--quiet"}, io.Discard, &errb)
	}()
	url := waitListening(t, &errb, exited)
	require.Contains(t, errb.String(), "has no chat template: /v1/chat/completions renders conversations with ChatML")

	cctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, node, "client.mjs", url, "stories260K")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node client.mjs:\n%s\n%s", stdout.String(), stderr.String())
	t.Logf("openai %s client output:\n%s", clientVersion(t, dir), stdout.String())

	checks := map[string]clientCheck{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var c clientCheck
		require.NoError(t, json.Unmarshal([]byte(line), &c), line)
		checks[c.Check] = c
	}

	// The same chat request without the client: the client must have read the same answer.
	var direct server.ChatCompletionResponse
	require.NoError(t, json.Unmarshal(postJSON(t, url+"/chat/completions", map[string]any{
		"model": "stories260K", "max_tokens": 24, "temperature": 0,
		"messages": []map[string]string{{"role": "system", "content": "You tell short stories."}, {"role": "user", "content": "Tell me about a cat."}},
	}), &direct))

	c := checks["chat"]
	require.Equal(t, "chat.completion", c.Object)
	require.Equal(t, "assistant", c.Role)
	require.Equal(t, direct.Choices[0].Message.Content, c.Content)
	require.NotEmpty(t, c.Content)
	require.Equal(t, 24, c.Usage.CompletionTokens)
	require.Equal(t, direct.Usage.PromptTokens, c.Usage.PromptTokens)

	s := checks["chat_stream"]
	require.Equal(t, "assistant", s.Role)
	require.Equal(t, c.Content, s.Content, "streamed text adds up to the whole reply")
	require.Equal(t, c.FinishReason, s.FinishReason)
	require.Equal(t, 1+24+1, s.Chunks, "the role chunk, one chunk per token, the usage chunk")
	require.Equal(t, 24, s.Usage.CompletionTokens)
	require.Positive(t, s.Usage.PromptTokensDetails.CachedTokens, "the same prompt again: its full blocks are hits")

	n := checks["chat_n"]
	require.Equal(t, []int{0, 1, 2}, n.Indexes)
	require.Len(t, n.Contents, 3)
	require.Equal(t, 3*16, n.Usage.CompletionTokens)

	lp := checks["chat_logprobs"]
	require.Equal(t, 8, lp.Completion)
	require.Len(t, lp.Tokens, 8)
	require.Len(t, lp.TokenIDs, 8)
	require.Equal(t, []int{2, 2, 2, 2, 2, 2, 2, 2}, lp.TopCounts, "top_logprobs: 2 at every position")
	for i, id := range lp.TokenIDs {
		require.Equal(t, lp.TopFirst[i], lp.Logprobs[i], "greedy: token %d (id %d) is the most likely", i, id)
	}
	require.Equal(t, lp.Content, strings.Join(lp.Tokens, ""))

	cm := checks["completion"]
	require.Equal(t, ", there was a little girl named Lily. She loved to play", cm.Text, "stories260K's greedy continuation (../shared/README.md)")
	require.Equal(t, cm.Text, cm.Streamed)

	// echo + logprobs + max_tokens 0: the prompt's tokens, null first, the same values
	// before and after the prefix hit, and the same as vLLM's prompt_logprobs.
	ec := checks["echo"]
	require.Equal(t, "The cat sat on the mat and looked at the big red ball. Then it jumped over the fence.", ec.Text)
	require.Len(t, ec.EchoMiss, len(ec.Tokens))
	require.Nil(t, ec.EchoMiss[0])
	require.Equal(t, -1, ec.TopCounts[0], "top_logprobs[0] is null")
	require.Equal(t, ec.EchoMiss, ec.EchoHit, "the same values from the prefix cache")
	require.Equal(t, ec.EchoMiss, ec.PromptLogp)
	require.Zero(t, ec.First.PromptTokensDetails.CachedTokens)
	require.Equal(t, (len(ec.Tokens)-1)/16*16, ec.Second.PromptTokensDetails.CachedTokens)
	require.Positive(t, ec.Second.PromptTokensDetails.CachedTokens)
	require.Zero(t, ec.Second.CompletionTokens)
	for i := 1; i < len(ec.Tokens); i++ {
		require.NotNil(t, ec.EchoMiss[i])
		require.LessOrEqual(t, ec.TopCounts[i], 6, "the top 5 and the prompt's token")
		require.GreaterOrEqual(t, ec.TopCounts[i], 5)
		require.Equal(t, ec.TextOffset[i-1]+len([]rune(ec.Tokens[i-1])), ec.TextOffset[i], "offsets count the tokens' characters")
	}

	mt := checks["multi_turn"]
	first, second := mt.First, mt.Second
	require.GreaterOrEqual(t, second.PromptTokensDetails.CachedTokens, (first.PromptTokens-1)/16*16, "the first request's full blocks are hits")
	require.Greater(t, second.PromptTokensDetails.CachedTokens, first.PromptTokens/2)
	require.Less(t, second.PromptTokensDetails.CachedTokens, second.PromptTokens)

	br := checks["bad_request"]
	require.Equal(t, 400, br.Status)
	require.Equal(t, "messages[0].role", br.Param)
	require.Contains(t, br.Message, `"wizard" is not a role`)

	stop()
	select {
	case err := <-exited:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		require.FailNow(t, "kvref serve did not stop")
	}
}

// clientVersion is the installed openai package's version.
func clientVersion(t *testing.T, dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", "openai", "package.json"))
	require.NoError(t, err)
	var pkg struct{ Version string }
	require.NoError(t, json.Unmarshal(data, &pkg))
	return pkg.Version
}
