package tokenizer

import "slices"

// Token texts llama.cpp's vocabulary loader (llama_vocab::impl::load)
// recognises when a file does not name the ids.
var (
	// eotTexts mark end-of-turn tokens.
	eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
		"<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	// eogTexts mark end-of-generation tokens.
	eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>",
		"<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>"}
	// fimTexts mark fill-in-the-middle tokens (prefix, suffix, middle, pad,
	// repo, file separator); the last three end generation.
	fimTexts = [6][]string{
		{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>"},
		{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>"},
		{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>"},
		{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"},
		{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
		{"<|file_sep|>"},
	}
	// harmonyRendered are the gpt-oss (o200k_harmony) tokens llama.cpp makes
	// user-defined, so that they are always rendered.
	harmonyRendered = []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}
)

// knownTexts holds every text of the lists above.
var knownTexts = func() map[string]bool {
	m := map[string]bool{"<|eom_id|>": true}
	for _, l := range append([][]string{eotTexts, eogTexts, harmonyRendered}, fimTexts[:]...) {
		for _, t := range l {
			m[t] = true
		}
	}
	return m
}()

// eogScan is what llama.cpp's vocabulary loader finds by token text.
type eogScan struct {
	eot int   // the end-of-turn id: the file's, else found by text; -1 for none
	eog []int // every end-of-generation id, in the order found
	// control are the ids whose text marks them as end-of-turn, end-of-message,
	// FIM or end-of-generation tokens: llama.cpp makes them control tokens.
	control []int
	// userDefined are the harmony tokens llama.cpp always renders.
	userDefined []int
	// endDropped is the <|end|> id llama.cpp takes out of the EOG set of a
	// harmony vocabulary (one with <|return|> and <|call|>), -1 otherwise.
	endDropped int
}

// scanEOG completes the end-of-generation ids of a vocabulary the way
// llama.cpp's vocab loader does. eos, eot and eom are the ids the file names
// (-1 when absent); fim holds its FIM pad, repo and separator ids. Tokens
// found by their text become EOT, EOM or FIM tokens when the file names none;
// the EOG set holds the FIM pad/repo/separator tokens, every token whose text
// is in eogTexts, EOS, EOT and EOM; and in a harmony vocabulary (gpt-oss:
// <|return|> and <|call|> both end generation) <|end|> does not. Where
// several tokens match, the lowest id wins (llama.cpp's choice depends on
// hash order).
func scanEOG(tokens []string, eos, eot, eom int, fim [3]int) eogScan {
	s := eogScan{eot: eot, endDropped: -1}
	// The ids of the tokens with any of the texts above, in id order.
	var known []int
	for id, t := range tokens {
		if knownTexts[t] {
			known = append(known, id)
		}
	}
	find := func(texts []string) int {
		for _, id := range known {
			if slices.Contains(texts, tokens[id]) {
				s.control = append(s.control, id)
				return id
			}
		}
		return -1
	}
	if s.eot < 0 {
		s.eot = find(eotTexts)
	}
	if eom < 0 {
		eom = find([]string{"<|eom_id|>"})
	}
	for i := range 3 {
		find(fimTexts[i]) // prefix, suffix, middle: only their type changes
	}
	for i := range fim {
		if fim[i] < 0 {
			fim[i] = find(fimTexts[3+i])
		}
	}
	add := func(id int) {
		if id >= 0 && !slices.Contains(s.eog, id) {
			s.eog = append(s.eog, id)
		}
	}
	for _, id := range fim {
		add(id)
	}
	for _, id := range known {
		t := tokens[id]
		if slices.Contains(eogTexts, t) {
			s.control = append(s.control, id)
			add(id)
		}
		if slices.Contains(harmonyRendered, t) {
			s.userDefined = append(s.userDefined, id)
		}
	}
	add(eos)
	add(s.eot)
	add(eom)

	has := func(text string) int {
		for _, id := range s.eog {
			if tokens[id] == text {
				return id
			}
		}
		return -1
	}
	if end := has("<|end|>"); end >= 0 && has("<|return|>") >= 0 && has("<|call|>") >= 0 {
		s.eog = slices.DeleteFunc(s.eog, func(id int) bool { return id == end })
		s.endDropped = end
	}
	return s
}

// detectEOG completes v's end-of-generation ids with scanEOG and sets the
// token types llama.cpp sets: tokens recognised by their text become control
// tokens, the harmony tokens user-defined (and the <|end|> a harmony
// vocabulary drops from EOG too). eom and fim are the ids the file names.
func detectEOG(v *Vocab, eom int, fim [3]int) {
	s := scanEOG(v.Tokens, v.EOS, v.EOT, eom, fim)
	for _, id := range s.control {
		v.Types[id] = TypeControl
	}
	for _, id := range s.userDefined {
		v.Types[id] = TypeUserDefined
	}
	if s.endDropped >= 0 {
		v.Types[s.endDropped] = TypeUserDefined
	}
	v.EOT = s.eot
	v.EOG = s.eog
}
