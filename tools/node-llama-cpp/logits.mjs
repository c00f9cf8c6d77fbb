// logits.mjs: node-llama-cpp (llama.cpp 0.5.0) as a logits oracle for kvref.
//
//   node logits.mjs --model F.gguf --prompt 1,2,3 [--steps 64] [--threads 1] [--cache f32]
//                   [--ctx 512] [--swa-full]
//
// Evaluates the token-id prompt (no BOS is added: the ids are sent as given), then takes
// --steps greedy steps, each the argmax of the raw logits (lowest id on a tie). Flash
// attention is off and the KV cache is --cache (f32 by default). Prints one JSON line per
// position whose logits were computed: {"step": i, "next": id, "logits": [...]}, where
// step 0 is the logits after the prompt and logits holds the whole vocabulary by id; the
// token fed at step i+1 is step i's "next". A last line {"done": true, "tokens": [...]}
// lists the generated ids. Used by internal/nodellama's tests.
import {getLlama} from "node-llama-cpp";

function parseArgs(argv) {
    const a = {steps: 64, threads: 1, cache: "f32", ctx: 512, swaFull: false};
    for (let i = 0; i < argv.length; i++) {
        const k = argv[i];
        const v = () => {
            if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
            return argv[++i];
        };
        switch (k) {
            case "--model": a.model = v(); break;
            case "--prompt": a.prompt = v().split(",").filter((s) => s !== "").map(Number); break;
            case "--steps": a.steps = Number(v()); break;
            case "--threads": a.threads = Number(v()); break;
            case "--cache": a.cache = v(); break;
            case "--ctx": a.ctx = Number(v()); break;
            case "--swa-full": a.swaFull = true; break;
            default: throw new Error(`unknown argument ${k}`);
        }
    }
    if (!a.model || !a.prompt || a.prompt.length === 0) throw new Error("--model and --prompt are required");
    if (a.prompt.some((t) => !Number.isInteger(t) || t < 0)) throw new Error(`--prompt: not a list of token ids: ${a.prompt}`);
    return a;
}

const args = parseArgs(process.argv.slice(2));
const llama = await getLlama({build: "never", gpu: false, logLevel: "error"});
const model = await llama.loadModel({modelPath: args.model, gpuLayers: 0});
const vocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length; // the GGUF vocabulary
const ctype = args.cache.toUpperCase();
const context = await model.createContext({
    contextSize: args.ctx, batchSize: args.ctx, sequences: 1, threads: args.threads,
    flashAttention: false, swaFullCache: args.swaFull,
    experimentalKvCacheKeyType: ctype, experimentalKvCacheValueType: ctype,
});
const seq = context.getSequence();

// dense returns the logits map as an array indexed by token id.
function dense(map) {
    const out = new Array(vocab).fill(null);
    for (const [id, l] of map) out[id] = l;
    return out;
}

// argmax with the lowest id winning ties, as kvref's greedy choice.
function argmax(arr) {
    let best = 0;
    for (let i = 1; i < arr.length; i++) if (arr[i] > arr[best]) best = i;
    return best;
}

const generated = [];
let input = args.prompt.map((t, i) => (i === args.prompt.length - 1 ? [t, {generateNext: {logits: true}}] : t));
for (let step = 0; step <= args.steps; step++) {
    const res = await seq.controlledEvaluate(input);
    const last = res[input.length - 1];
    if (!last || !last.next || !last.next.logits) throw new Error(`step ${step}: node-llama-cpp returned no logits`);
    const logits = dense(last.next.logits);
    const next = argmax(logits);
    process.stdout.write(JSON.stringify({step, next, logits}) + "\n");
    if (step === args.steps) break;
    generated.push(next);
    input = [[next, {generateNext: {logits: true}}]];
}
process.stdout.write(JSON.stringify({done: true, tokens: generated, vocab}) + "\n");
await context.dispose();
await model.dispose();
await llama.dispose();
