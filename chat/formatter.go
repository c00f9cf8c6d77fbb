// Package chat turns conversations into prompts and runs them: a model's chat template
// bound to its tokenizer (Formatter), the validation of OpenAI-style messages (Messages),
// and a multi-turn conversation on an engine whose history stays in the prefix cache
// (Session), which `kvref chat` and `kvref serve`'s /v1/chat/completions are built on.
package chat

import (
	"fmt"
	"strings"
	"time"

	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/tokenizer"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// ChatML is the template used for a model that has none, as llama.cpp does: Hugging Face's
// former default, <|im_start|>ROLE\nCONTENT<|im_end|>\n per message.
const ChatML = `{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`

// TemplateOptions choose the template of a Formatter.
type TemplateOptions struct {
	File            string // a Jinja file (--chat-template FILE)
	TokenizerConfig string // a tokenizer_config.json whose chat_template, bos_token and eos_token to use
	Name            string // a named template of the model or tokenizer config ("": the default)
}

// Formatter is a chat template bound to a tokenizer: it renders a conversation and
// tokenizes the result with special tokens parsed, as llama-server and transformers do.
type Formatter struct {
	Template  *chattemplate.Template
	Tokenizer tokenizer.Tokenizer
	// BOSToken and EOSToken are the template's bos_token and eos_token: the vocabulary's
	// (or the tokenizer_config.json's) token texts.
	BOSToken, EOSToken string
	// Fallback says the model has no chat template and Template is ChatML.
	Fallback bool
	// EndOfTurn is the text the template puts after an assistant's message ("<|im_end|>",
	// "<|eot_id|>", "</s>", ...), "" when it has none. StopTokens and StopStrings end
	// generation there: the token when the vocabulary has it as one token that is not
	// already an end-of-generation token, the text when it is no single token.
	EndOfTurn   string
	StopTokens  []int
	StopStrings []string
	// Vars are extra template variables (tools, enable_thinking, ...); Now is the time
	// strftime_now sees (zero: the current time).
	Vars map[string]any
	Now  time.Time
}

// NewFormatter returns the formatter of m's chat template, or of the one opt names. A model
// without a template gets ChatML (Fallback set), as llama.cpp gives it.
func NewFormatter(m *model.Model, opt TemplateOptions) (*Formatter, error) {
	tok := m.Tokenizer
	f := &Formatter{Tokenizer: tok, BOSToken: tokenText(tok, tok.BOS()), EOSToken: tokenText(tok, tok.EOS())}
	var err error
	switch {
	case opt.File != "" && opt.TokenizerConfig != "":
		return nil, fmt.Errorf("chat: give a template file or a tokenizer_config.json, not both")
	case opt.File != "":
		if opt.Name != "" {
			return nil, fmt.Errorf("chat: a template file has one template; a template name (%q) selects among a model's", opt.Name)
		}
		f.Template, err = chattemplate.ReadFile(opt.File)
	case opt.TokenizerConfig != "":
		var tc chattemplate.TokenizerConfig
		if tc, err = chattemplate.ReadTokenizerConfig(opt.TokenizerConfig); err != nil {
			return nil, err
		}
		f.BOSToken, f.EOSToken = tc.BOSToken, tc.EOSToken
		f.Template, err = tc.Templates.Template(opt.TokenizerConfig, opt.Name)
	case len(m.ChatTemplates) > 0:
		f.Template, err = m.ChatTemplates.Template(m.Source, opt.Name)
	case opt.Name != "":
		return nil, fmt.Errorf("chat: %s has no chat templates, so none named %q", m.Source, opt.Name)
	default:
		f.Fallback = true
		f.Template, err = chattemplate.Parse("ChatML (kvref's fallback: the model has no chat template)", ChatML)
	}
	if err != nil {
		return nil, err
	}
	f.findEndOfTurn()
	return f, nil
}

// tokenText is the vocabulary text of id, or "" for none.
func tokenText(tok tokenizer.Tokenizer, id int) string {
	if id < 0 {
		return ""
	}
	return tok.TokenText(id)
}

// With returns a copy of f whose template variables are f's and vars (vars win).
func (f *Formatter) With(vars map[string]any) *Formatter {
	if len(vars) == 0 {
		return f
	}
	g := *f
	g.Vars = make(map[string]any, len(f.Vars)+len(vars))
	for k, v := range f.Vars {
		g.Vars[k] = v
	}
	for k, v := range vars {
		g.Vars[k] = v
	}
	return &g
}

// Render renders a conversation (messages as chattemplate.Context takes them).
func (f *Formatter) Render(messages []any, addGenerationPrompt bool) (string, error) {
	return f.Template.Render(chattemplate.Context{
		Messages: messages, AddGenerationPrompt: addGenerationPrompt,
		BOSToken: f.BOSToken, EOSToken: f.EOSToken, Vars: f.Vars, Now: f.Now,
	})
}

// Encode tokenizes rendered text with special tokens parsed. The template writes the
// special tokens it wants (bos_token included); BOS is prepended only when the vocabulary
// adds one and the text does not already start with it, as llama-server does, so a
// template that writes bos_token never gets two.
func (f *Formatter) Encode(text string) []int {
	ids := f.Tokenizer.EncodeSpecial(text, tokenizer.EncodeOptions{ParseSpecial: true})
	if bos := f.Tokenizer.BOS(); f.Tokenizer.AddBOS() && bos >= 0 && (len(ids) == 0 || ids[0] != bos) {
		ids = append([]int{bos}, ids...)
	}
	return ids
}

// Prompt renders a conversation and tokenizes it.
func (f *Formatter) Prompt(messages []any, addGenerationPrompt bool) (string, []int, error) {
	text, err := f.Render(messages, addGenerationPrompt)
	if err != nil {
		return "", nil, err
	}
	return text, f.Encode(text), nil
}

// probeReply is an assistant message whose end the formatter looks for.
const probeReply = "kvref probes the end of an assistant turn"

// findEndOfTurn renders a user and an assistant message and reads what the template writes
// right after the assistant's text, up to the end of its line: the end-of-turn marker. A
// template that cannot render the probe leaves it unknown.
func (f *Formatter) findEndOfTurn() {
	probe := []any{
		chattemplate.Object{{Key: "role", Value: "user"}, {Key: "content", Value: "Hello"}},
		chattemplate.Object{{Key: "role", Value: "assistant"}, {Key: "content", Value: probeReply}},
	}
	text, err := f.Render(probe, false)
	if err != nil {
		return
	}
	i := strings.LastIndex(text, probeReply)
	if i < 0 {
		return
	}
	after := text[i+len(probeReply):]
	if j := strings.IndexByte(after, '\n'); j >= 0 {
		after = after[:j]
	}
	f.EndOfTurn = strings.TrimSpace(after)
	if f.EndOfTurn == "" {
		return
	}
	ids := f.Tokenizer.EncodeSpecial(f.EndOfTurn, tokenizer.EncodeOptions{ParseSpecial: true})
	switch {
	case len(ids) == 1 && f.Tokenizer.IsEOG(ids[0]):
	case len(ids) == 1:
		f.StopTokens = ids
	default:
		f.StopStrings = []string{f.EndOfTurn}
	}
}
