package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/kvref/kvref/chat"
	"github.com/kvref/kvref/tokenizer"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// POST /tokenize and /detokenize (also under /v1), in both shapes clients use:
//
//   - llama-server's: {"content": TEXT, "add_special": bool, "parse_special": bool,
//     "with_pieces": bool} → {"tokens": [id, ...]} (with_pieces: [{"id", "piece"}, ...]);
//     {"tokens": [...]} → {"content": TEXT}.
//   - vLLM's: {"model", "prompt": TEXT, "add_special_tokens": bool} or {"model", "messages",
//     "add_generation_prompt", "chat_template_kwargs"} → {"count", "max_model_len", "tokens",
//     "token_strs"}; {"model", "tokens": [...]} → {"prompt": TEXT}.
//
// The request's fields say which shape it is: content (llama-server) or prompt/messages
// (vLLM); a detokenize request with model is vLLM's. Text is tokenized as a completion
// prompt is: special tokens parsed unless the request says parse_special false, or the
// server was started with --tokenize-parse-special=false (Options.TokenizeLiteral);
// add_special / add_special_tokens add BOS when the model has one (llama-server's default
// false, vLLM's true). Detokenizing gives the text a completion would show (control tokens
// such as BOS give nothing).

// tokenizeRequest is either shape's body.
type tokenizeRequest struct {
	Model string `json:"model"`
	// llama-server
	Content      *string `json:"content"`
	AddSpecial   *bool   `json:"add_special"`
	ParseSpecial *bool   `json:"parse_special"`
	WithPieces   bool    `json:"with_pieces"`
	// vLLM
	Prompt              *string         `json:"prompt"`
	AddSpecialTokens    *bool           `json:"add_special_tokens"`
	ReturnTokenStrs     bool            `json:"return_token_strs"`
	Messages            json.RawMessage `json:"messages"`
	AddGenerationPrompt *bool           `json:"add_generation_prompt"`
	ChatTemplateKwargs  json.RawMessage `json:"chat_template_kwargs"`
}

// TokenPiece is one token of llama-server's with_pieces answer.
type TokenPiece struct {
	ID    int    `json:"id"`
	Piece string `json:"piece"`
}

// handleTokenize serves POST /tokenize.
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readRequest(w, r)
	if !ok {
		return
	}
	var req tokenizeRequest
	if aerr := decodeStrict(body, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	if req.Model != "" && req.Model != s.model {
		writeError(w, newError(404, invalidRequest, "model", "model_not_found", "the model %q does not exist: this server serves %q", req.Model, s.model))
		return
	}
	tok := s.eng.Model().Tokenizer
	parse := !s.opts.TokenizeLiteral
	if req.ParseSpecial != nil {
		parse = *req.ParseSpecial
	}
	limit := s.maxPromptBytes()
	switch {
	case req.Content != nil: // llama-server
		if len(*req.Content) > limit {
			writeError(w, badRequest("content", "content is %d bytes, more than any text the context of %d tokens holds (%d bytes)", len(*req.Content), s.eng.Context(), limit))
			return
		}
		ids := tok.EncodeSpecial(*req.Content, tokenizer.EncodeOptions{AddSpecial: req.AddSpecial != nil && *req.AddSpecial, ParseSpecial: parse})
		if !req.WithPieces {
			writeJSON(w, http.StatusOK, map[string][]int{"tokens": orEmpty(ids)})
			return
		}
		pieces := make([]TokenPiece, len(ids))
		for i, id := range ids {
			pieces[i] = TokenPiece{ID: id, Piece: string(tok.Piece(id))}
		}
		writeJSON(w, http.StatusOK, map[string][]TokenPiece{"tokens": pieces})
	case req.Prompt != nil || len(req.Messages) > 0: // vLLM
		var ids []int
		if req.Prompt != nil {
			if len(*req.Prompt) > limit {
				writeError(w, badRequest("prompt", "prompt is %d bytes, more than any text the context of %d tokens holds (%d bytes)", len(*req.Prompt), s.eng.Context(), limit))
				return
			}
			ids = tok.EncodeSpecial(*req.Prompt, tokenizer.EncodeOptions{AddSpecial: req.AddSpecialTokens == nil || *req.AddSpecialTokens, ParseSpecial: parse})
		} else {
			var aerr *APIError
			if ids, aerr = s.tokenizeChat(&req); aerr != nil {
				writeError(w, aerr)
				return
			}
		}
		resp := map[string]any{"count": len(ids), "max_model_len": s.eng.Context(), "tokens": orEmpty(ids), "token_strs": nil}
		if req.ReturnTokenStrs {
			strs := make([]string, len(ids))
			for i, id := range ids {
				strs[i] = tok.TokenText(id)
			}
			resp["token_strs"] = strs
		}
		writeJSON(w, http.StatusOK, resp)
	default:
		writeError(w, badRequest("", "give content (llama-server's shape) or prompt or messages (vLLM's shape) to tokenize"))
	}
}

// tokenizeChat renders vLLM's messages with the chat template, as a chat request would,
// and tokenizes the result.
func (s *Server) tokenizeChat(req *tokenizeRequest) ([]int, *APIError) {
	creq := chatRequest{Messages: req.Messages, ChatTemplateKwargs: req.ChatTemplateKwargs}
	if aerr := s.boundChat(&creq); aerr != nil {
		return nil, aerr
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
	text, err := f.Render(msgs, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt)
	if err != nil {
		var raised *chattemplate.RaiseError
		if errors.As(err, &raised) {
			return nil, badRequest("messages", "the model's chat template refused the conversation: %s", raised.Message).withCode("chat_template_error")
		}
		return nil, badRequest("messages", "%v", err).withCode("chat_template_unsupported")
	}
	if limit := s.maxPromptBytes(); len(text) > limit {
		return nil, badRequest("messages", "the rendered conversation is %d bytes, more than any text the context of %d tokens holds", len(text), s.eng.Context())
	}
	return f.Encode(text), nil
}

// detokenizeRequest is either shape's body: {"tokens"}, with "model" in vLLM's.
type detokenizeRequest struct {
	Model  string          `json:"model"`
	Tokens json.RawMessage `json:"tokens"`
}

// handleDetokenize serves POST /detokenize.
func (s *Server) handleDetokenize(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readRequest(w, r)
	if !ok {
		return
	}
	var req detokenizeRequest
	if aerr := decodeStrict(body, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	if req.Model != "" && req.Model != s.model {
		writeError(w, newError(404, invalidRequest, "model", "model_not_found", "the model %q does not exist: this server serves %q", req.Model, s.model))
		return
	}
	if len(req.Tokens) == 0 || string(req.Tokens) == "null" {
		writeError(w, badRequest("tokens", "tokens is required: an array of token ids"))
		return
	}
	raw, aerr := s.promptIDs(req.Tokens, "tokens")
	if aerr != nil {
		aerr.Param = strPtr("tokens")
		writeError(w, aerr)
		return
	}
	vocab := s.eng.Model().Config.Vocab
	for i, id := range raw {
		if id < 0 || id >= vocab {
			writeError(w, badRequest("tokens", "tokens[%d] = %d is outside the vocabulary (ids 0 to %d)", i, id, vocab-1))
			return
		}
	}
	text := s.eng.Model().Tokenizer.Decode(raw)
	if req.Model != "" { // vLLM's shape
		writeJSON(w, http.StatusOK, map[string]string{"prompt": text})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"content": text})
}

// orEmpty is ids, or an empty (not null) list.
func orEmpty(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

func strPtr(s string) *string { return &s }
