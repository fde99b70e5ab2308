// Package llamabench measures whole-model speed side by side with
// llama.cpp: kernbench's `run -bench` and llama.cpp's `llama-bench` on
// the same GGUF files, alternating, so that a machine's drift reaches
// both alike.
//
// Both programs are driven the same way: one process per model and
// round, with the same prompt (pp) and generation (tg) lengths,
// repetitions, threads and flash-attention setting, and both report in
// llama-bench's JSON fields (-o json), which Parse reads: the test's
// n_prompt and n_gen, the mean and standard deviation of tokens per
// second over the repetitions (avg_ts, stddev_ts), and each
// repetition's time (samples_ns) and speed (samples_ts). Each process
// runs in a process group of its own and has a time limit; at the limit
// the whole group is killed, so that nothing it started outlives it.
//
// Pair runs the rounds, alternating which program goes first, and
// Records turns each (model, test, program) into a bench.Record whose
// samples are the seconds of every repetition of every round, so that
// bench.Compare can put a ratio and a Mann-Whitney verdict on each test.
package llamabench
