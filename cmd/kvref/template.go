package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kvref/kvref/chat"
)

func init() {
	register(command{"template", "render a conversation with a model's chat template (and show its token ids)", templateCmd})
}

// templateFlagSet adds the flags that choose a chat template (kvref template, chat, serve).
func templateFlagSet(fs *flag.FlagSet) *chat.TemplateOptions {
	var o chat.TemplateOptions
	fs.StringVar(&o.File, "chat-template", "", "a Jinja chat template FILE instead of the model's")
	fs.StringVar(&o.Name, "chat-template-name", "", "a named template of the model (GGUF tokenizer.chat_template.NAME, a tokenizer_config.json list entry); default: its default one")
	return &o
}

func templateCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("template", stderr, "usage: kvref template [-m MODEL | --chat-template FILE | --tokenizer-config FILE] --messages FILE.json [--vars FILE.json] [--now TIME] [--add-generation-prompt] [--json]")
	var mf modelFlags
	mf.register(fs, "")
	topt := templateFlagSet(fs)
	fs.StringVar(&topt.TokenizerConfig, "tokenizer-config", "", "a tokenizer_config.json whose chat_template, bos_token and eos_token to use")
	messages := fs.String("messages", "", "the conversation: a JSON FILE holding an array of {\"role\", \"content\", ...} messages (required)")
	vars := fs.String("vars", "", "a JSON FILE holding an object of extra template variables (tools, enable_thinking, date_string, ...)")
	now := fs.String("now", "", "the time strftime_now formats, RFC 3339 (e.g. 2024-07-26T00:00:00Z); default: now")
	agp := fs.Bool("add-generation-prompt", false, "end with the header of an assistant turn, as a chat request does")
	asJSON := fs.Bool("json", false, "print one JSON object: the prompt, its token ids (the model's tokenizer, special tokens parsed) and the end-of-turn stops")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *messages == "" || fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("--messages FILE.json is required (and nothing else after the flags)")
	}
	list, err := chat.ReadMessagesFile(*messages)
	if err != nil {
		return err
	}
	m, err := mf.open(stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	f, err := chat.NewFormatter(m, *topt)
	if err != nil {
		return err
	}
	if f.Fallback {
		fmt.Fprintf(stderr, "kvref template: %s has no chat template: rendering with ChatML, as llama.cpp does (--chat-template FILE for another)\n", m.Source)
	}
	if *vars != "" {
		if f.Vars, err = chat.ReadVarsFile(*vars); err != nil {
			return err
		}
	}
	if *now != "" {
		if f.Now, err = time.Parse(time.RFC3339, *now); err != nil {
			return fmt.Errorf("--now: %w", err)
		}
	}
	text, ids, err := f.Prompt(list, *agp)
	if err != nil {
		return err
	}
	if !*asJSON {
		_, err := io.WriteString(stdout, text)
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false) // "<|im_start|>" as it is
	return enc.Encode(f.Rendered(text, ids))
}
