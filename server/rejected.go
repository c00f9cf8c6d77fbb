package server

import (
	"errors"

	"github.com/kvref/kvref/engine"
)

// rejected turns the engine's rejection of a request (an error wrapping
// engine.ErrRejected) into a 400 with code request_rejected: the param is the request field
// that set the limit, and the message adds what the client, or the operator, can change.
// The server checks these limits itself before the engine sees a request (request.go fit),
// so this is the engine's word on a request that got past those checks.
func rejected(err error) *APIError {
	var (
		long  *engine.PromptTooLongError
		over  *engine.ContextExceededError
		vocab *engine.TokenOutOfVocabError
		small *engine.CacheTooSmallError
	)
	param, hint := "prompt", ""
	switch {
	case errors.As(err, &long):
		hint = "; shorten the prompt"
	case errors.As(err, &over):
		param, hint = "max_tokens", "; lower max_tokens"
	case errors.As(err, &vocab):
	case errors.As(err, &small):
		hint = "; shorten the prompt, or restart the server with more --cache-blocks"
	}
	return badRequest(param, "%v%s", err, hint).withCode("request_rejected")
}
