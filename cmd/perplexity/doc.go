// Command perplexity measures a GGUF model's perplexity on a text with
// llama-perplexity's method, and compares two models by KL divergence.
//
// Usage:
//
//	perplexity -m model.gguf -f text.txt [-c 512] [--chunks N]
//	perplexity -m base.gguf -f text.txt -kld-base base.kld
//	perplexity -m quantized.gguf -kld base.kld
//	perplexity -m base.gguf -f text.txt -kld-base base.logits -kld-format llama
//	perplexity -m model-f16.gguf -f text.txt -c 512 -imatrix-out imatrix.gguf
//
// # Perplexity
//
// The whole text is tokenized once, with BOS in front where the vocabulary
// adds one, and split into non-overlapping chunks of -c tokens (the tail that
// does not fill a chunk is left out; --chunks N keeps the first N). Each
// chunk is evaluated from an empty cache with its first token replaced by
// BOS (where the vocabulary adds BOS), so every chunk starts like a
// document. In each chunk only the second half is scored, so that every
// scored token has at least c/2 tokens of context: for each position p from
// first = c/2 to c-2 the negative log-likelihood of the next token is
//
//	nll(p) = -log softmax(logits(p))[token(p+1)]
//
// computed in float64. After each chunk the running perplexity
// exp(mean nll) is printed as "[k]PPL,"; at the end
//
//	Final estimate: PPL = exp(m) +/- exp(m) * sqrt((mean(nll^2) - m^2) / (n-1))
//
// where m is the mean of the n scored nlls: the standard error of the mean
// NLL carried through exp by its derivative, as llama-perplexity does.
// When the batch (-b) holds several chunks, they are evaluated together as
// separate sequences of one batch (n_seq = b / c), as llama-perplexity
// does with its default batch of 2048; the results are the same. The
// default here is one chunk per batch (-b = c), which is faster on the CPU
// backend: the sequences of a batch share one cache, and every token's
// attention then spans all of its cells, masked.
//
// The text is read as is. -lf turns CRLF line endings into LF first
// (WikiText files from some sources have CRLF, the one llama.cpp's scripts
// download has LF).
//
// # Importance matrices
//
// -imatrix-out FILE also computes an importance matrix over the chunks,
// as llama-imatrix does, and writes it to FILE in llama-imatrix's GGUF
// format (-imatrix-format dat: its legacy format), for quantize -imatrix
// and llama-quantize --imatrix. For every matrix product of a layer's
// weights (blk.*; output.weight too with -process-output) with at least 16
// f32 activation rows, the squares of each row go into the weight's
// per-column sums and its count grows by the rows; a stack of experts
// (MUL_MAT_ID) keeps sums and a count per expert, fed by the tokens routed
// to it. The chunk count is the largest count over -c. Every position asks
// for logits, as in llama-imatrix (otherwise the last layer computes only
// the scored rows), and the graphs run node by node, so collecting costs
// time. The perplexity is measured and printed as without it.
//
// The sums match llama-imatrix's over the same model, text, -c and
// --chunks within about 1e-6 relative with an f32 KV cache and -fa off;
// with an f16 cache, rounding the attention's operands to f16 turns the
// two implementations' float32-level differences into differences of up
// to about 1e-3 in the later layers.
//
// This is a mode of perplexity rather than a command of its own because
// llama-imatrix's method is perplexity's: the same tokenization, chunks,
// BOS at each chunk's start, batches of parallel sequences and the same
// perplexity measured along the way; only the node hook and the output
// file are its own.
//
// # KL divergence
//
// -kld-base FILE runs the perplexity measurement and also saves, for every
// scored position, the model's log-probabilities over the whole vocabulary
// (16-bit quantized; see the file format below) together with
// the evaluated tokens. -kld FILE then evaluates another model on the same
// tokens (no -f needed; given -f, its tokens must match the file's) and
// compares, at every scored position p, the base distribution P with the
// model's Q:
//
//	KLD(p)  = sum over tokens i of P_i * (log P_i - log Q_i)
//	Δp(p)   = Q(next token) - P(next token)
//	same(p) = argmax P == argmax Q
//
// (tokens more than 32 nats below the base's most likely one count as
// P_i = 0, and P is renormalized over the others, which keeps the 16-bit
// storage from adding more than about 1e-8 nats). It prints a line per chunk and at the end the statistics of
// llama-perplexity: PPL(Q) and PPL(base) with their errors as above, their
// correlation, mean ln(PPL(Q)/PPL(base)) = mean(nll_Q) - mean(nll_base)
// with error sqrt(uQ^2 + uB^2 - 2 cov), the mean KLD with the standard
// error of the mean, its percentiles (linear interpolation between ranks),
// the Δp statistics and "Same top p" with the binomial error
// sqrt(p(1-p)/(n-1)). Standard errors are given as 0 below 11 positions, as
// llama.cpp does. A file made with another vocabulary (size or token texts)
// or from other tokens is refused.
//
// A progress bar with the time left goes to stderr when it is a terminal;
// otherwise a progress line is written now and then.
//
// # The KLD base file
//
// The KL-divergence base file holds, for every scored position of a
// perplexity run, the base model's log-probabilities over the whole
// vocabulary, quantized to 16 bits, so that another model (a quantized one,
// say) can later be compared against them without the base model. All
// numbers are little-endian.
//
//	header (40 bytes)
//	  0  [8]byte  magic "KBLOGPRB"
//	  8  uint32   version, 1
//	 12  uint32   n_vocab: vocabulary size
//	 16  uint32   n_ctx: chunk length in tokens
//	 20  uint32   n_chunks
//	 24  uint32   first: the first scored position of a chunk, n_ctx/2
//	 28  uint32   reserved, 0
//	 32  uint64   vocabulary hash: FNV-1a 64 of every token's text, each
//	              followed by a zero byte, in id order
//	tokens: n_chunks*n_ctx int32, the tokens as evaluated (with BOS
//	        already put at each chunk's start where the vocabulary adds BOS)
//	records: for each chunk, for each scored position p = first .. n_ctx-2
//	         (n_ctx-1-first of them), predicting the token at p+1:
//	  0  float32  scale
//	  4  float32  lo: the log-probability of code 1
//	  8  float32  the exact log-probability of the token at p+1
//	 12  int32    the most probable token (lowest id among equals)
//	 16  [n_vocab]uint16 codes
//
// Code 0 marks a token more than 32 nats below the most probable one (its
// log-probability below lo = max(min lp, max lp - 32)); it counts as
// probability 0 in the base distribution. Code k >= 1 stands for the
// log-probability lo + scale*(k-1), where scale = (max lp - lo)/65534, so
// the quantization error is at most scale/2 (2.4e-4 nats at the full 32-nat
// range). The reader renormalizes the kept tokens' probabilities, which makes that error second order in the KL divergence
// (about 1e-8 nats), while the tokens left out carry at most n_vocab*e^-32
// of the probability. llama.cpp's file (magic "_logits_") is built the same
// way but with a 16-nat range and no renormalization, which leaves about
// 5e-5 nats of noise per position on stories260K; it also keeps no exact target
// log-probability, no argmax and no vocabulary hash, which kernbench stores
// so that the base PPL and "same top" are exact and a file from another
// vocabulary is refused.
//
// # llama-perplexity's file
//
// -kld also reads the file llama-perplexity --kl-divergence-base writes
// (told apart by its magic "_logits_"; its layout is in llamakld.go), and
// -kld-base FILE -kld-format llama writes one, its records computed in
// llama-perplexity's float32 arithmetic, for llama-perplexity
// --kl-divergence to read. With such a file the comparison follows
// llama-perplexity: the tokens are the text's as tokenized (BOS goes in
// at each chunk's start when evaluating), the base's target
// log-probability and top token are read from the 16-bit codes, and the
// KL divergence sums exp(lp) (lp - log Q) over the tokens with lp > -16,
// without renormalizing; only the vocabulary's size can be checked.
package main
