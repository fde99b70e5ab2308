// Package sample picks the next token from a model's logits, the way
// llama.cpp's sampling chain does.
//
// A [Chain] turns a logit vector into a [Candidates] list (token id, logit,
// probability), runs each [Sampler] over it in order, and picks a token. The
// samplers are the llama.cpp family:
//
//   - filters that drop candidates: [TopK], [TopP], [MinP], [Typical],
//     [TailFree];
//   - transforms that change logits: [Temperature], [Penalties];
//   - selectors that pick a token: [Greedy], [Dist], [MirostatV1],
//     [MirostatV2].
//
// Every random choice comes from a math/rand/v2 PCG generator seeded
// explicitly, so a chain built with the same seed and fed the same logits
// produces the same tokens. [Params], [DefaultParams] and [FromParams] build
// the chain llama.cpp's command-line tools build from their sampling flags.
//
// The candidate list is sorted lazily: samplers that need descending logit
// order sort it (or partially sort it, for top-k) and record that in
// [Candidates.Sorted]; samplers that do not need order leave it alone.
//
// Where this package departs from llama.cpp the doc comment of the sampler
// says so. In summary: probabilities are accumulated in float64; ties are
// broken towards the lower token id; a filter never leaves the list empty;
// a temperature of zero or less removes every candidate but the best instead
// of masking them to -Inf; zero-probability candidates are never drawn.
//
// Samplers and chains hold state (histories, generators, mirostat's mu) and
// are not safe for concurrent use.
package sample
