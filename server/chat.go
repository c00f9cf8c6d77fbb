package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/kvref/kvref/chat"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// chatRequest is the JSON body of POST /v1/chat/completions.
type chatRequest struct {
	generationFields
	Messages            json.RawMessage `json:"messages"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Logprobs            bool            `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`
	ReturnTokenIDs      bool            `json:"return_token_ids"`      // vLLM: the prompt's and the reply's token ids
	AddGenerationPrompt *bool           `json:"add_generation_prompt"` // vLLM; default true
	ChatTemplateKwargs  json.RawMessage `json:"chat_template_kwargs"`  // vLLM: extra template variables (chat_bounds.go)

	// Not supported: refused unless absent or neutral.
	Tools                json.RawMessage        `json:"tools"`
	ToolChoice           json.RawMessage        `json:"tool_choice"`
	Functions            json.RawMessage        `json:"functions"`
	FunctionCall         json.RawMessage        `json:"function_call"`
	ParallelToolCalls    *bool                  `json:"parallel_tool_calls"`
	ResponseFormat       *struct{ Type string } `json:"response_format"`
	Modalities           []string               `json:"modalities"`
	Audio                json.RawMessage        `json:"audio"`
	Prediction           json.RawMessage        `json:"prediction"`
	ContinueFinalMessage bool                   `json:"continue_final_message"`
}

// chatParams are what a chat request adds to params.
type chatParams struct {
	returnTokenIDs bool
}

// handleChat serves POST /v1/chat/completions: the conversation rendered with the model's
// chat template, then generated exactly as a completion is, on the same scheduler.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	s.serveGeneration(w, r, s.parseChat, chatShape{})
}

// parseChat decodes and validates a chat request and renders its conversation into the
// prompt. Without max_tokens (or max_completion_tokens), a reply may run to the end of the
// context, as far as the cache can hold it.
func (s *Server) parseChat(body []byte) (*params, *APIError) {
	var req chatRequest
	if aerr := decodeStrict(body, &req); aerr != nil {
		return nil, aerr
	}
	if aerr := s.boundChat(&req); aerr != nil {
		return nil, aerr
	}
	if req.Echo {
		return nil, unsupportedParam("echo", "vLLM's chat echo (the reply repeating the last message) is not implemented; leave it out or false")
	}
	p := &params{promptName: "the rendered conversation", logprobs: -1, promptLogprobs: -1, chat: &chatParams{returnTokenIDs: req.ReturnTokenIDs}}
	if aerr := s.parseGeneration(&req.generationFields, p); aerr != nil {
		return nil, aerr
	}
	if aerr := unsupportedChat(&req); aerr != nil {
		return nil, aerr
	}
	if m := req.MaxCompletionTokens; m != nil {
		switch {
		case *m < 1:
			return nil, badRequest("max_completion_tokens", "max_completion_tokens must be at least 1, got %d", *m)
		case req.MaxTokens != nil && *req.MaxTokens != *m:
			return nil, badRequest("max_completion_tokens", "max_tokens (%d) and max_completion_tokens (%d) disagree; give one of them", *req.MaxTokens, *m)
		}
		p.maxTokens, p.scoreOnly = *m, false
	}
	switch {
	case req.TopLogprobs != nil && !req.Logprobs:
		return nil, badRequest("top_logprobs", "top_logprobs needs logprobs: true")
	case req.TopLogprobs != nil && (*req.TopLogprobs < 0 || *req.TopLogprobs > s.opts.MaxLogprobs):
		return nil, badRequest("top_logprobs", "top_logprobs must be between 0 and %d, got %d", s.opts.MaxLogprobs, *req.TopLogprobs)
	case req.Logprobs:
		p.logprobs = 0
		if req.TopLogprobs != nil {
			p.logprobs = *req.TopLogprobs
		}
	}
	msgs, err := chat.ParseMessages(req.Messages)
	if err != nil {
		var me *chat.MessageError
		if errors.As(err, &me) {
			return nil, badRequest(me.Field, "%s", me.Error())
		}
		return nil, badRequest("messages", "%v", err)
	}
	vars, aerr := s.templateKwargs(req.ChatTemplateKwargs)
	if aerr != nil {
		return nil, aerr
	}
	f, aerr := s.chatFormatter(vars)
	if aerr != nil {
		return nil, aerr
	}
	agp := req.AddGenerationPrompt == nil || *req.AddGenerationPrompt
	text, err := f.Render(msgs, agp)
	if err != nil {
		var raised *chattemplate.RaiseError
		if errors.As(err, &raised) {
			return nil, badRequest("messages", "the model's chat template refused the conversation: %s", raised.Message).withCode("chat_template_error")
		}
		return nil, badRequest("messages", "%v", err).withCode("chat_template_unsupported")
	}
	if limit := s.maxPromptBytes(); len(text) > limit { // refused before it is tokenized
		return nil, badRequest("messages", "the rendered conversation is %d bytes of text, but no prompt that fits the context of %d tokens is longer than %d bytes (4 × %d bytes, the longest token, per token); shorten the conversation",
			len(text), s.eng.Context(), limit, s.longestPiece).withCode("context_length_exceeded")
	}
	ids := f.Encode(text)
	p.prompts = [][]int{ids}
	p.stopIDs = append(append([]int(nil), p.stopIDs...), f.StopTokens...)
	p.stops = append(append([]string(nil), p.stops...), f.StopStrings...)
	if p.maxTokens == 0 && !p.scoreOnly {
		cfg := s.eng.Pool().Config()
		p.maxTokens = max(1, min(s.eng.Context()-len(ids), cfg.NumBlocks*cfg.BlockSize-len(ids)+1))
	}
	return p, nil
}

// chatFormatter is the server's formatter with a request's chat_template_kwargs.
func (s *Server) chatFormatter(vars map[string]any) (*chat.Formatter, *APIError) {
	if s.chatErr != nil {
		return nil, newError(500, serverError, "", "chat_template_error", "the model's chat template cannot be used: %v", s.chatErr)
	}
	return s.chat.With(vars), nil
}

// unsupportedChat refuses the chat fields kvref does not implement.
func unsupportedChat(req *chatRequest) *APIError {
	present := func(raw json.RawMessage) bool {
		return len(raw) > 0 && string(raw) != "null" && string(raw) != "[]"
	}
	no := unsupportedParam
	const noTools = "kvref serve executes no tools and parses no tool calls from the output; leave it out"
	switch {
	case present(req.Tools):
		return no("tools", noTools)
	case present(req.ToolChoice) && string(req.ToolChoice) != `"none"`:
		return no("tool_choice", noTools+` (or "none")`)
	case present(req.Functions):
		return no("functions", noTools)
	case present(req.FunctionCall) && string(req.FunctionCall) != `"none"`:
		return no("function_call", noTools)
	case req.ParallelToolCalls != nil && *req.ParallelToolCalls:
		return no("parallel_tool_calls", noTools)
	case req.ResponseFormat != nil && req.ResponseFormat.Type != "" && req.ResponseFormat.Type != "text":
		return no("response_format", "kvref does not constrain the output to JSON; leave it out or {\"type\": \"text\"}")
	case present(req.Audio):
		return no("audio", "kvref serves text-only models")
	case present(req.Prediction):
		return no("prediction", "kvref does not do predicted outputs")
	case req.ContinueFinalMessage:
		return no("continue_final_message", "the reply always starts a new assistant turn")
	}
	for _, m := range req.Modalities {
		if m != "text" {
			return no("modalities", "kvref serves text-only models; leave it out or [\"text\"]")
		}
	}
	return nil
}

// chatShape is /v1/chat/completions' format.
type chatShape struct{}

func (chatShape) idPrefix() string { return "chatcmpl-" }

func (chatShape) response(c *completion) any {
	resp := ChatCompletionResponse{ObjectHeader: c.object("chat.completion")}
	resp.Choices = make([]ChatChoice, len(c.choices))
	for i := range c.choices {
		ch := &c.choices[i]
		resp.Choices[i] = ChatChoice{Index: i, Message: ChatMessage{Role: "assistant", Content: ch.text},
			Logprobs: c.chatLogprobs(ch.logprobs), FinishReason: ch.finish}
		if c.p.chat.returnTokenIDs {
			resp.Choices[i].TokenIDs = c.results[i/c.p.n].Outputs[i%c.p.n]
		}
	}
	if c.p.chat.returnTokenIDs {
		resp.PromptTokenIDs = c.p.prompts[0]
	}
	if c.p.promptLogprobs >= 0 {
		resp.PromptLogprobs = c.vllmPromptLogprobs(0)
	}
	u := c.usage()
	resp.Usage = &u
	return resp
}

// start sends each choice's role, as OpenAI's first chunks do (the first with the prompt's
// token ids when asked).
func (chatShape) start(c *completion) []any {
	out := make([]any, len(c.choices))
	for i := range c.choices {
		chunk := c.chatChunk(ChatChunkChoice{Index: i, Delta: ChatDelta{Role: "assistant"}})
		if i == 0 && c.p.chat.returnTokenIDs {
			chunk.PromptTokenIDs = c.p.prompts[0]
		}
		out[i] = chunk
	}
	return out
}

func (chatShape) chunk(c *completion, delta CompletionChoice) any {
	ch := ChatChunkChoice{Index: delta.Index, Delta: ChatDelta{Content: delta.Text},
		Logprobs: c.chatLogprobs(delta.Logprobs), FinishReason: delta.FinishReason}
	if c.p.chat.returnTokenIDs {
		ch.TokenIDs = []int{delta.tokenID}
	}
	return c.chatChunk(ch)
}

func (chatShape) usageChunk(c *completion, u Usage) any {
	chunk := c.chatChunk()
	chunk.Usage = &u
	return chunk
}

// chatChunk is a chunk of c with the given choices (none: an empty list).
func (c *completion) chatChunk(choices ...ChatChunkChoice) ChatChunk {
	if choices == nil {
		choices = []ChatChunkChoice{}
	}
	return ChatChunk{ObjectHeader: c.object("chat.completion.chunk"), Choices: choices}
}

// chatLogprobs converts the legacy record of some tokens into the chat format.
func (c *completion) chatLogprobs(lp *Logprobs) *ChatLogprobs {
	if lp == nil {
		return nil
	}
	tok := c.s.eng.Model().Tokenizer
	bytesOf := func(id int) []int {
		piece := tok.Piece(id)
		out := make([]int, len(piece))
		for i, b := range piece {
			out[i] = int(b)
		}
		return out
	}
	out := &ChatLogprobs{Content: make([]ChatTokenLogprob, len(lp.TokenIDs)), TokenIDs: lp.TokenIDs, TopLogprobsIDs: lp.TopLogprobsIDs}
	for i, id := range lp.TokenIDs {
		e := ChatTokenLogprob{Token: lp.Tokens[i], Logprob: lp.TokenLogprobs[i], Bytes: bytesOf(id), TopLogprobs: []ChatTopLogprob{}}
		for _, top := range lp.TopLogprobsIDs[i] {
			e.TopLogprobs = append(e.TopLogprobs, ChatTopLogprob{Token: c.s.tokenText(top.ID, false), Logprob: top.Logprob, Bytes: bytesOf(top.ID)})
		}
		out.Content[i] = e
	}
	return out
}
