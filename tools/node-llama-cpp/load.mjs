// load.mjs: what bench.mjs, serve.mjs and logits.mjs share: their command-line parsing and
// the loading of the model and its context in node-llama-cpp (CPU only, flash attention
// off, keys and values cached in one type).
import {getLlama} from "node-llama-cpp";

// parseFlags returns a copy of defaults with the flags of argv applied. flags maps each
// flag to [key, parse]: parse turns the flag's value into the setting key; a null parse
// marks a flag without a value, which sets key to true. An unknown flag, or a flag whose
// value is missing, is an error naming it.
export function parseFlags(argv, defaults, flags) {
    const a = {...defaults};
    for (let i = 0; i < argv.length; i++) {
        const k = argv[i];
        if (!Object.hasOwn(flags, k)) throw new Error(`unknown argument ${k}`);
        const [key, parse] = flags[k];
        if (parse === null) {
            a[key] = true;
            continue;
        }
        if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
        a[key] = parse(argv[++i]);
    }
    return a;
}

// text is the parse of a flag whose value is a string.
export const text = (s) => s;

// loadModel loads the GGUF file at modelPath on the CPU and creates its context with
// contextOptions, flash attention off and keys and values cached as cache (f32, f16, ...).
// It returns llama, model and context, and vocab: the size of the GGUF vocabulary.
export async function loadModel(modelPath, cache, contextOptions) {
    const llama = await getLlama({build: "never", gpu: false, logLevel: "error"});
    const model = await llama.loadModel({modelPath, gpuLayers: 0});
    const ctype = cache.toUpperCase();
    const context = await model.createContext({
        ...contextOptions, flashAttention: false,
        experimentalKvCacheKeyType: ctype, experimentalKvCacheValueType: ctype,
    });
    const vocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
    return {llama, model, context, vocab};
}
