package tokenizer

import "slices"

// Token texts llama.cpp recognises when a GGUF file does not name the ids.
var (
	// eotTexts mark end-of-turn tokens.
	eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "<｜end▁of▁sentence｜>"}
	// eogTexts mark end-of-generation tokens.
	eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>"}
	// fimTexts mark fill-in-the-middle tokens (prefix, suffix, middle, pad,
	// repo, file separator); the last three end generation.
	fimTexts = [6][]string{
		{"<|fim_prefix|>", "<fim-prefix>", "<｜fim▁begin｜>", "<PRE>"},
		{"<|fim_suffix|>", "<fim-suffix>", "<｜fim▁hole｜>", "<SUF>"},
		{"<|fim_middle|>", "<fim-middle>", "<｜fim▁end｜>", "<MID>"},
		{"<|fim_pad|>", "<fim-pad>", "<PAD>"},
		{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>"},
		{"<|file_sep|>"},
	}
)

// detectEOG completes v's end-of-generation ids the way llama.cpp's vocab
// loader does: tokens found by their text become EOT, EOM or FIM tokens when
// the file does not name one, and are forced to be control tokens; the EOG
// set holds the FIM pad/repo/separator tokens, every token whose text is in
// eogTexts, EOS, EOT and eom. fim holds the pad, repo and separator ids read
// from the file (-1 when absent). Where several tokens match, the lowest id
// wins (llama.cpp's choice depends on hash order).
func detectEOG(v *Vocab, eom int, fim [3]int) {
	find := func(texts []string) int {
		for id, t := range v.Tokens {
			if slices.Contains(texts, t) {
				v.Types[id] = TypeControl
				return id
			}
		}
		return -1
	}
	if v.EOT < 0 {
		v.EOT = find(eotTexts)
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

	v.EOG = nil
	add := func(id int) {
		if id >= 0 && !slices.Contains(v.EOG, id) {
			v.EOG = append(v.EOG, id)
		}
	}
	for _, id := range fim {
		add(id)
	}
	for id, t := range v.Tokens {
		if slices.Contains(eogTexts, t) {
			v.Types[id] = TypeControl
			add(id)
		}
	}
	add(v.EOS)
	add(v.EOT)
	add(eom)
}
