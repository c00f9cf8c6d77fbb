package server

// ChatCompletionResponse is the body of a /v1/chat/completions response (OpenAI's
// "chat.completion" object).
type ChatCompletionResponse struct {
	ObjectHeader              // Object: "chat.completion"
	Choices      []ChatChoice `json:"choices"`
	Usage        *Usage       `json:"usage"`
	// PromptTokenIDs are the rendered conversation's token ids, when the request sets
	// return_token_ids (vLLM's field): what the model was given, to verify a template.
	PromptTokenIDs []int `json:"prompt_token_ids,omitempty"`
	// PromptLogprobs is vLLM's prompt_logprobs of the rendered conversation, when asked for.
	PromptLogprobs []PromptPosition `json:"prompt_logprobs,omitempty"`
}

// ChatChoice is one reply. With n choices, index i is the i-th.
type ChatChoice struct {
	Index        int           `json:"index"`
	Message      ChatMessage   `json:"message"`
	Logprobs     *ChatLogprobs `json:"logprobs"`      // null unless the request asked for logprobs
	FinishReason string        `json:"finish_reason"` // "stop" or "length"
	TokenIDs     []int         `json:"token_ids,omitempty"`
}

// ChatMessage is the assistant's message.
type ChatMessage struct {
	Role    string  `json:"role"` // "assistant"
	Content string  `json:"content"`
	Refusal *string `json:"refusal"` // always null
}

// ChatChunk is one streamed chunk (OpenAI's "chat.completion.chunk").
type ChatChunk struct {
	ObjectHeader                     // Object: "chat.completion.chunk"
	Choices        []ChatChunkChoice `json:"choices"`
	Usage          *Usage            `json:"usage,omitempty"`            // only in the final usage chunk
	PromptTokenIDs []int             `json:"prompt_token_ids,omitempty"` // in the first chunk, with return_token_ids
}

// ChatChunkChoice is one choice's delta.
type ChatChunkChoice struct {
	Index        int           `json:"index"`
	Delta        ChatDelta     `json:"delta"`
	Logprobs     *ChatLogprobs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"` // null until the choice ends
	TokenIDs     []int         `json:"token_ids,omitempty"`
}

// ChatDelta is the new part of the assistant's message: its role in a choice's first
// chunk, then text.
type ChatDelta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

// ChatLogprobs are the log-probabilities of a reply's tokens in OpenAI's chat format, plus
// kvref's exact ids as /v1/completions gives them (token_ids, top_logprobs_ids).
type ChatLogprobs struct {
	Content        []ChatTokenLogprob `json:"content"`
	Refusal        []ChatTokenLogprob `json:"refusal"` // always null
	TokenIDs       []int              `json:"token_ids"`
	TopLogprobsIDs [][]IDLogprob      `json:"top_logprobs_ids"`
}

// ChatTokenLogprob is one token: its text, log-probability and bytes, and the most likely
// tokens at its position, best first.
type ChatTokenLogprob struct {
	Token       string           `json:"token"`
	Logprob     float64          `json:"logprob"`
	Bytes       []int            `json:"bytes"`
	TopLogprobs []ChatTopLogprob `json:"top_logprobs"`
}

// ChatTopLogprob is one of the most likely tokens at a position.
type ChatTopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}
