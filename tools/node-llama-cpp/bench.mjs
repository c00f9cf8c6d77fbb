// bench.mjs: node-llama-cpp 3.22.1 (llama.cpp 0.5.0) as a speed yardstick, measured as
// llama-bench measures: `kvref bench --vs-node-llama-cpp DIR` runs it beside kvref.
//
//   node bench.mjs --model F.gguf [--prompt 512] [--gen 64] [--threads 2] [--cache f16]
//                  [--reps 1] [--batch 512]
//
// Loads the model (timed), warms up (a short prompt and a few tokens), then per
// repetition: pp, a --prompt-token prompt evaluated into an empty sequence without
// generating; tg, --gen greedy tokens generated from an empty sequence after BOS (each a
// decode of one token, as llama-bench's tg). Flash attention off, the cache --cache.
// Prints one JSON object: the rates (tokens/s, the mean over repetitions), the load time,
// and per test the process's CPU seconds over the wall seconds (process.cpuUsage, which
// counts threads that have ended too), and the CPU time of the threads still alive at its
// end (/proc/self/task/*/stat, in 10 ms ticks: meaningful for tests of a second or more).
// ggml's CPU backend starts and ends worker threads as it computes, so their time shows in
// the first figure only: cpu_over_wall is the number of cores llama.cpp kept busy.
import fs from "node:fs";
import {loadModel, parseFlags, text} from "./load.mjs";

function parseArgs(argv) {
    const a = parseFlags(argv, {prompt: 512, gen: 64, threads: 2, cache: "f16", reps: 1, batch: 512}, {
        "--model": ["model", text],
        "--prompt": ["prompt", Number],
        "--gen": ["gen", Number],
        "--threads": ["threads", Number],
        "--cache": ["cache", text],
        "--reps": ["reps", Number],
        "--batch": ["batch", Number],
    });
    if (!a.model) throw new Error("--model is required");
    return a;
}

// threadTimes returns each thread's CPU seconds (user + system) by thread id.
function threadTimes() {
    const hz = 100; // USER_HZ on Linux
    const out = {};
    for (const tid of fs.readdirSync("/proc/self/task")) {
        try {
            const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
            const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields from 3 (state) on
            out[tid] = (Number(f[11]) + Number(f[12])) / hz; // utime (14), stime (15)
        } catch {
            // the thread ended between listing and reading
        }
    }
    return out;
}

// usage returns, for a test between two threadTimes readings over wall seconds, the share
// of the wall time of each thread still alive at the end above 1% (highest first), how
// many reached 5%, and the process's CPU seconds over wall seconds from cpu, the
// process.cpuUsage difference over the test. node-llama-cpp runs each llama_decode on a
// thread of libuv's pool, not always the same one, and ggml's worker threads come and go,
// so the per-thread figures miss work: cpu_over_wall, against the threads asked for, is
// the figure that says how many cores llama.cpp kept busy.
function usage(before, after, wall, cpu) {
    const shares = [];
    for (const [tid, t] of Object.entries(after)) {
        const d = t - (before[tid] ?? 0);
        if (d / wall >= 0.01) shares.push(Math.round((d / wall) * 100) / 100);
    }
    cpu = (cpu.user + cpu.system) / 1e6;
    shares.sort((a, b) => b - a);
    return {busy_threads: shares.filter((x) => x >= 0.05).length, thread_shares: shares, cpu_over_wall: Math.round((cpu / wall) * 100) / 100};
}

const args = parseArgs(process.argv.slice(2));
const t0 = performance.now();
const {llama, model, context, vocab} = await loadModel(args.model, args.cache, {
    contextSize: Math.max(args.prompt, args.gen + 1) + 16, sequences: 1, batchSize: args.batch, threads: args.threads,
});
const seq = context.getSequence();
const loadSeconds = (performance.now() - t0) / 1000;
const bos = model.tokens.bos ?? 1;
const prompt = [bos];
for (let i = 1; i < args.prompt; i++) prompt.push(3 + ((i * 7919) % (vocab - 3)));

async function pp() {
    await seq.clearHistory();
    const start = performance.now();
    await seq.evaluateWithoutGeneratingNewTokens(prompt);
    return (performance.now() - start) / 1000;
}

async function tg() {
    await seq.clearHistory();
    const start = performance.now();
    let n = 0;
    for await (const token of seq.evaluate([bos], {temperature: 0, yieldEogToken: true})) {
        void token;
        if (++n >= args.gen) break;
    }
    return (performance.now() - start) / 1000;
}

// warm-up: a short prompt and a few tokens
await seq.evaluateWithoutGeneratingNewTokens(prompt.slice(0, Math.min(32, prompt.length)));
{
    let n = 0;
    await seq.clearHistory();
    for await (const token of seq.evaluate([bos], {temperature: 0, yieldEogToken: true})) {
        void token;
        if (++n >= 4) break;
    }
}

const result = {
    engine: "node-llama-cpp 3.22.1", llama_cpp: llama.llamaCppRelease?.release ?? "", threads: args.threads,
    cache_type: args.cache, load_seconds: loadSeconds, tests: [],
};
for (const [name, n, run] of [[`pp${args.prompt}`, args.prompt, pp], [`tg${args.gen}`, args.gen, tg]]) {
    if (n <= 0) continue;
    const rates = [];
    const before = threadTimes();
    const cpu = process.cpuUsage();
    const start = performance.now(); // the thread shares are over the whole loop, clears included
    for (let r = 0; r < args.reps; r++) rates.push(n / (await run()));
    const u = usage(before, threadTimes(), (performance.now() - start) / 1000, process.cpuUsage(cpu));
    result.tests.push({test: name, tokens_per_second: rates.reduce((a, b) => a + b, 0) / rates.length, rates, ...u});
}
process.stdout.write(JSON.stringify(result) + "\n");
await context.dispose();
await model.dispose();
await llama.dispose();
