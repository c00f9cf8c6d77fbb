// Writes testdata/special/hf-special.jsonl: what Hugging Face's tokenizers
// library (its official Node binding, npm tokenizers@0.23.2, pinned in
// package-lock.json) gives for text with special tokens. See ../special/README.md.
//
//   node special_hf.js FIXTURES > ../special/hf-special.jsonl
//
// FIXTURES is the directory TestWriteSpecialFixtures wrote (inputs.json and
// hf/NAME/tokenizer.json). Each line: {"tokenizer", "input", "ids",
// "ids_with_special", "decode_keep", "decode_skip"}: ids and
// ids_with_special are encode(input) with addSpecialTokens false and true
// (special tokens in the text are parsed, the library's default);
// decode_keep and decode_skip are decode(ids_with_special) with
// skipSpecialTokens false and true.
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
const path = require('path');

const names = ['smollm', 'gpt2', 'smollm-flags', 'gpt2-flags', 'llama2-260k'];

(async () => {
  const [dir] = process.argv.slice(2);
  const inputs = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
  for (const name of names) {
    const tok = Tokenizer.fromFile(path.join(dir, 'hf', name, 'tokenizer.json'));
    for (const input of inputs) {
      const ids = Array.from((await tok.encode(input, null, { addSpecialTokens: false })).getIds());
      const withSpecial = Array.from((await tok.encode(input, null, { addSpecialTokens: true })).getIds());
      console.log(JSON.stringify({
        tokenizer: name, input, ids, ids_with_special: withSpecial,
        decode_keep: await tok.decode(withSpecial, false),
        decode_skip: await tok.decode(withSpecial, true),
      }));
    }
  }
})().catch((e) => { console.error(e); process.exit(1); });
