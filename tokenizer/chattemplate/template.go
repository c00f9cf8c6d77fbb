// Package chattemplate finds and renders chat templates: the Jinja programs that turn a
// conversation into the exact text an instruct model was trained on.
//
// Templates come from a GGUF file's tokenizer.chat_template (and named
// tokenizer.chat_template.NAME), from tokenizer_config.json's chat_template (a string, or a
// list of {name, template}), or from a file. They are rendered the way Hugging Face's
// transformers renders them: trim_blocks and lstrip_blocks on, a single trailing newline of
// the source dropped (Jinja2's keep_trailing_newline=False), and a context of messages,
// add_generation_prompt, bos_token, eos_token, tools and documents (none unless given),
// raise_exception(message), strftime_now(format) and any extra variables (enable_thinking,
// date_string, ...). tojson is Python's json.dumps(ensure_ascii=False): keys in the order
// the client sent them.
//
// The Jinja engine is github.com/ardanlabs/jinja, a Go implementation written for chat
// templates (docs/dependencies.md says why it was chosen). A template that uses
// a construct the engine lacks fails with an error that names the construct; a template
// that calls raise_exception fails with a *RaiseError carrying the template's own message.
package chattemplate

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"
)

// Template is a parsed chat template. It is safe for concurrent use.
type Template struct {
	Name   string // where it came from, for messages ("tokenizer.chat_template", a file name, ...)
	Source string // the Jinja source as found
	tmpl   *jinja.Template
}

// Context is what a template sees when it renders a conversation.
type Context struct {
	// Messages are the conversation: each an Object (or map[string]any) with at least
	// "role" and "content"; other keys (tool_calls, name, ...) pass through.
	Messages []any
	// AddGenerationPrompt ends the text with the header of an assistant turn.
	AddGenerationPrompt bool
	// BOSToken and EOSToken are the text of the vocabulary's BOS and EOS tokens; empty
	// leaves the variable undefined (a tokenizer_config.json whose token is null).
	BOSToken, EOSToken string
	// Vars are further variables: tools, documents, enable_thinking, date_string, ...
	// They override the defaults above (tools and documents are none unless given).
	Vars map[string]any
	// Now is the time strftime_now formats; the zero time means the current local time.
	Now time.Time
}

// RaiseError is a template's own refusal: it called raise_exception(Message), for example
// because the conversation does not alternate user and assistant turns.
type RaiseError struct {
	Template string
	Message  string
}

// Error returns the template's message, saying which template raised it.
func (e *RaiseError) Error() string {
	return fmt.Sprintf("chat template %s raised an error: %s", e.Template, e.Message)
}

// Parse compiles a chat template. name says where it came from, for error messages.
func Parse(name, source string) (*Template, error) {
	src := strings.TrimSuffix(source, "\n") // Jinja2's keep_trailing_newline=False
	if src != source && strings.HasSuffix(src, "\r") {
		src = strings.TrimSuffix(src, "\r")
	}
	src, err := rewriteToJSON(src)
	if err != nil {
		return nil, fmt.Errorf("chat template %s: %w", name, err)
	}
	if src, err = rewriteIn(src); err != nil {
		return nil, fmt.Errorf("chat template %s: %w", name, err)
	}
	t, err := compile(src)
	if err != nil {
		return nil, fmt.Errorf("chat template %s: the Jinja engine cannot parse it: %w", name, err)
	}
	return &Template{Name: name, Source: source, tmpl: t}, nil
}

// compile runs the engine's parser, turning a panic of the engine into an error.
func compile(src string) (t *jinja.Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the parser failed (%v)", p)
		}
	}()
	return jinja.Compile(src)
}

// Render renders the conversation. A raise_exception of the template is a *RaiseError; a
// construct the engine does not implement is an error that names it.
func (t *Template) Render(c Context) (out string, err error) {
	vars, err := t.variables(c)
	if err != nil {
		return "", err
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("chat template %s: the Jinja engine failed while rendering (%v); kvref cannot render this template", t.Name, p)
		}
	}()
	out, err = t.tmpl.RenderValues(vars)
	if err != nil {
		var raised *RaiseError
		if errors.As(err, &raised) {
			return "", raised
		}
		return "", fmt.Errorf("chat template %s: %s", t.Name, explain(err))
	}
	return out, nil
}

// variables builds the template's global variables from c.
func (t *Template) variables(c Context) (map[string]jinja.Value, error) {
	now := c.Now
	if now.IsZero() {
		now = time.Now()
	}
	vars := map[string]jinja.Value{
		"add_generation_prompt": jinja.NewBool(c.AddGenerationPrompt),
		"tools":                 jinja.None(),
		"documents":             jinja.None(),
		"raise_exception": jinja.NewCallable("raise_exception", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			msg := "raise_exception() called without a message"
			if len(args) > 0 {
				msg = valueString(args[0])
			}
			return jinja.Undefined(), &RaiseError{Template: t.Name, Message: msg}
		}),
		"strftime_now": jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			if len(args) != 1 || !args[0].IsString() {
				return jinja.Undefined(), fmt.Errorf("strftime_now takes one format string")
			}
			s, err := strftime(args[0].AsString(), now)
			return jinja.NewString(s), err
		}),
		tojsonFunc: jinja.NewCallable("tojson", tojson),
		inFunc:     jinja.NewCallable("in", inTest),
	}
	if c.BOSToken != "" {
		vars["bos_token"] = jinja.NewString(c.BOSToken)
	}
	if c.EOSToken != "" {
		vars["eos_token"] = jinja.NewString(c.EOSToken)
	}
	msgs, err := toValue(c.Messages)
	if err != nil {
		return nil, fmt.Errorf("chat template %s: messages%w", t.Name, err)
	}
	vars["messages"] = msgs
	for k, v := range c.Vars {
		if k == tojsonFunc || k == inFunc {
			continue
		}
		jv, err := toValue(v)
		if err != nil {
			return nil, fmt.Errorf("chat template %s: variable %s: %w", t.Name, k, err)
		}
		vars[k] = jv
	}
	return vars, nil
}

// reNotCallable matches the engine's error for a call of something it does not have.
var reNotCallable = regexp.MustCompile(`^(\S+?)\.(\w+) is not callable: Undefined$`)

// explain rewords the engine's errors so that they name the construct kvref cannot render.
func explain(err error) string {
	msg := err.Error()
	if m := reNotCallable.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("the template calls %s.%s(), a method kvref's Jinja engine does not implement (or %s has no such attribute)", m[1], m[2], m[1])
	}
	return fmt.Sprintf("the Jinja engine cannot render it: %s", msg)
}
