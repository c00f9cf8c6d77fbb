package chat

// Rendered is a conversation rendered by a Formatter, as kvref template --json prints it:
// the template's name, the prompt and its token ids, and the end-of-turn stops.
type Rendered struct {
	Template    string   `json:"template"`
	Prompt      string   `json:"prompt"`
	TokenIDs    []int    `json:"token_ids"`
	Tokens      int      `json:"tokens"`
	EndOfTurn   string   `json:"end_of_turn,omitempty"`
	StopTokens  []int    `json:"stop_token_ids,omitempty"`
	StopStrings []string `json:"stop_strings,omitempty"`
}

// Rendered describes the prompt text with its token ids ids (Prompt's results), rendered
// with f's template, with f's end-of-turn stops.
func (f *Formatter) Rendered(text string, ids []int) Rendered {
	return Rendered{Template: f.Template.Name, Prompt: text, TokenIDs: ids, Tokens: len(ids),
		EndOfTurn: f.EndOfTurn, StopTokens: f.StopTokens, StopStrings: f.StopStrings}
}
