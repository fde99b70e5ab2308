// fa_vec.cuh: FLASH_ATTN_EXT's vector (decode) kernels, included by
// flash_attn_ext.cu after its parameters (kb_fa) and loaders, whose
// definitions these kernels use.
#pragma once

// The vector (decode) kernel, kb_flash_attn_vec_d<D>_r<R> (f16 K and V
// on 16-byte aligned addresses) and kb_flash_attn_vec_q8_0_d<D>_r<R> (q8_0
// K and V), with rows of D = 64, 128 or 256 elements, for a K/V head with
// at most R (1, 2, 4 or 8) query rows. A block of
// FV_WARPS warps takes the R rows of one (K/V head, sequence, split) and
// reads each key of its split once, straight from global memory:
//
//   - a warp's lanes form 32 / LPK groups of LPK = D/8 lanes; a group takes
//     one key, lane i of it dims 8i..8i+7 (f16: one 16-byte load of K and
//     one of V per key), so a warp request reads whole rows (D=128: two keys,
//     512 contiguous-row bytes); a warp takes U keys per group at a
//     time (all its loads issued before any is used; U * 32/LPK * R is
//     about FV_KEYS, U at most FV_MAXU);
//   - q rows are converted as the tiled kernel converts them (f16 or q8_0
//     for the dot product) and held in registers, 8 dims per lane and
//     row: f16 K, as floats; q8_0 K, as codes packed in two ints and the
//     scale of their block (3 registers, not 8, a row);
//   - scores: 8 products per lane (q8_0: two __dp4a of the codes, times
//     the two scales), summed over the group by shuffles;
//     the chunk's maximum over the warp raises the running maximum m
//     (the same in every lane), and each group keeps its own running sum
//     l and accumulator of its dims, all rescaled alike;
//   - after the split the groups' sums are added (shuffles), the warps'
//     (m, l, acc) merged in shared memory as kb_flash_attn_combine merges
//     splits, and the block writes its rows (one split) or their partial
//     results for kb_flash_attn_combine.
//
// Masks, sinks, softcap, ALiBi, NaN and fully masked rows follow the tiled
// kernel: a key masked for every row of the block is not read, a masked
// key's weight is 0 and a 0 weight is never multiplied in.
//
// Decode is bound by the loads in flight, not by their width: a token of
// a GQA model has one block per K/V head unless the keys are split (the
// host splits them for two waves of blocks, op_flash_attn_ext.go), and
// __launch_bounds__ (FV_MINB) holds the registers so that 3 or 4 blocks
// of 4 warps fit an SM.
#define FV_WARPS 4
#define FV_KEYS 16  // keys a warp loads at a time for one row (fewer per row for more rows)
#define FV_MAXU 4   // but at most 4 16-byte loads of K (and of V) per lane


// fv_sts writes a float4 of shared memory as one access (kb_ld16f
// reads one).
__device__ __forceinline__ void fv_sts(float* p, float a, float b, float c, float d) {
#ifdef __KBSIMT__
	typedef float v4 __attribute__((vector_size(16)));
	*(v4*)p = v4{a, b, c, d};
#else
	*(float4*)p = make_float4(a, b, c, d);
#endif
}

// fv_h8 widens the 8 halves of u to floats.
__device__ __forceinline__ void fv_h8(uint4 u, float f[8]) {
	f[0] = kb_h2f((u16)(u.x & 0xffffu));
	f[1] = kb_h2f((u16)(u.x >> 16));
	f[2] = kb_h2f((u16)(u.y & 0xffffu));
	f[3] = kb_h2f((u16)(u.y >> 16));
	f[4] = kb_h2f((u16)(u.z & 0xffffu));
	f[5] = kb_h2f((u16)(u.z >> 16));
	f[6] = kb_h2f((u16)(u.w & 0xffffu));
	f[7] = kb_h2f((u16)(u.w >> 16));
}

// fv_raw<T> loads lane li's 8 elements (dims 8li..8li+7) of the K or V
// row at row, undecoded; fv_dec<T> decodes them to floats. f16: one
// 16-byte load. q8_0: the 8 codes (x, y) and the scale (z) of their block,
// lanes 4b..4b+3 sharing block b, in five 2-byte loads: blocks are 34
// bytes, so codes and scale are only 2-byte aligned. (Reading the words
// that hold them, 4-byte loads shifted together, was measured on an H200
// at 0.90-0.93x of this: more instructions and registers for a kernel
// that is bound by the warps it has in flight, not by load width.)
template <int T>
__device__ __forceinline__ uint4 fv_raw(const char* row, int li);
template <>
__device__ __forceinline__ uint4 fv_raw<KB_F16>(const char* row, int li) {
	return kb_ld16u(row + 16 * li);
}
template <>
__device__ __forceinline__ uint4 fv_raw<KB_Q8_0>(const char* row, int li) {
	const char* b = row + 34 * (li / 4);
	const u16* c = (const u16*)(b + 2 + 8 * (li % 4));
	return make_uint4((u32)c[0] | (u32)c[1] << 16, (u32)c[2] | (u32)c[3] << 16, *(const u16*)b, 0);
}
template <int T>
__device__ __forceinline__ void fv_dec(uint4 u, float f[8]);
template <>
__device__ __forceinline__ void fv_dec<KB_F16>(uint4 u, float f[8]) {
	fv_h8(u, f);
}
template <>
__device__ __forceinline__ void fv_dec<KB_Q8_0>(uint4 u, float f[8]) {
	const float d = kb_h2f((u16)u.z);
#pragma unroll
	for (int i = 0; i < 4; i++) {
		f[i] = (float)(i8)((u.x >> (8 * i)) & 0xffu) * d;
		f[4 + i] = (float)(i8)((u.y >> (8 * i)) & 0xffu) * d;
	}
}

// fv_pos is where dim d of a row lies in shared memory (rows FV_LD(D)
// floats apart): lane i's dims 8i..8i+3 at 4i and 8i+4..8i+7 at
// D/2 + 16 + 4i, so that the lanes' float4 accesses are consecutive and
// 32 consecutive dims fall in 32 banks (no bank conflicts either way).
#define FV_LD(D) ((D) + 16)
template <int D>
__device__ __forceinline__ int fv_pos(int d) {
	return ((d >> 2) & 1) * (D / 2 + 16) + (d >> 3) * 4 + (d & 3);
}

template <int T, int D, int R>
__device__ __forceinline__ void flash_attn_vec(const char* q, const kb_tensor& tq, const char* k, const kb_tensor& tk,
                                               const char* v, const kb_tensor& tv, const char* mask,
                                               const kb_tensor& tm, const char* sinks, const kb_tensor& ts, char* dst,
                                               const kb_tensor& td, float* part, const kb_fa_params& p) {
	constexpr int LPK = D / 8, KPW = 32 / LPK;       // lanes per key, keys per warp request
	constexpr int U0 = (FV_KEYS / R > KPW ? FV_KEYS / R : KPW) / KPW;
	constexpr int U = U0 < FV_MAXU ? U0 : FV_MAXU;  // K (and V) requests per chunk
	constexpr int CK = KPW * U;                      // keys per warp chunk
	extern __shared__ float kb_fa_smem[];
	constexpr int LD = FV_LD(D);
	static_assert(CK * R <= 32, "a chunk's mask terms are read a (row, key) per lane");
	float* Qs = kb_fa_smem;               // [R][LD], dims at fv_pos
	float* As = Qs + R * LD;              // [FV_WARPS][R][LD], dims at fv_pos
	float* MLs = As + FV_WARPS * R * LD;  // [FV_WARPS][R][2]
	float* Qd = MLs + FV_WARPS * R * 2;   // [R][D/32]: q8_0 q's block scales
	const int lane = threadIdx.x, warp = threadIdx.y;
	const int g = lane / LPK, li = lane % LPK;
	const i64 nq = tq.ne[1], nh = tq.ne[2], nkv = tk.ne[1], nhk = tk.ne[2];
	const i64 G = p.group;
	const int hk = (int)blockIdx.y % (int)nhk, split = (int)blockIdx.y / (int)nhk;
	const int i3 = blockIdx.z, i3k = i3 / (int)(tq.ne[3] / tk.ne[3]);
	const i64 row0 = (i64)blockIdx.x * R;

	bool valid[R];
	const char* mrow[R];
	float slope[R];
#pragma unroll
	for (int r = 0; r < R; r++) {
		const i64 rho = row0 + r, qi = rho / G, hi = hk * G + rho % G;
		valid[r] = rho < nq * G;
		slope[r] = kb_alibi_slope(p.m0, p.m1, p.n_log2, hi);
		mrow[r] = mask && valid[r] ? mask + qi * tm.nb[1] + (hi % tm.ne[2]) * tm.nb[2] + (i3 % tm.ne[3]) * tm.nb[3] : 0;
	}
	// q rows to shared memory, converted to f16 values (a warp per row,
	// a lane per dim), then 8 dims per lane into registers. For q8_0 K,
	// q is quantized to q8_0 blocks of 32 dims as the tiled kernel and
	// the reference quantize it (the scale rounded to f16): Qs holds the
	// codes, Qd the blocks' scales (NaN for a block with a NaN or an
	// infinity, whose scores are then NaN as the float products made
	// them), and a lane keeps its 8 codes packed in two ints and its
	// block's scale, for __dp4a with K's codes.
	for (int r = warp; r < R; r += FV_WARPS) {
		const i64 rho = row0 + r, qi = rho / G, hi = hk * G + rho % G;
		const char* qr = rho < nq * G ? q + kb_offset(tq, 0, qi, hi, i3) : 0;
		for (int d = lane; d < D; d += 32) {
			const float x = qr ? *(const float*)(qr + d * tq.nb[0]) : 0.0f;
			float y = kb_h2f(kb_f2h(x));
			if (T == KB_Q8_0) {
				const float amax = kb_warp_max(fabsf(x));
				const float dq = amax / 127.0f, id = dq != 0.0f ? 1.0f / dq : 0.0f;
				const bool bad = __any_sync(0xffffffffu, !(fabsf(x) <= 3.402823466e38f));
				y = bad ? 0.0f : roundf(x * id);
				if (lane == 0) Qd[r * (D / 32) + d / 32] = bad ? NAN : kb_h2f(kb_f2h(dq));
			}
			Qs[r * LD + fv_pos<D>(d)] = y;
		}
	}
	__syncthreads();
	constexpr int NQF = T == KB_Q8_0 ? 1 : 8;  // q as floats (f16 K) ...
	constexpr int NQC = T == KB_Q8_0 ? 2 : 1;  // ... or as packed codes (q8_0 K)
	float qf[R][NQF], qd[R];
	int qc[R][NQC];
#pragma unroll
	for (int r = 0; r < R; r++) {
		const float4 a = kb_ld16f(Qs + r * LD + 4 * li), b = kb_ld16f(Qs + r * LD + D / 2 + 16 + 4 * li);
		if (T == KB_Q8_0) {
			qc[r][0] = (int)(((u32)(int)a.x & 0xffu) | ((u32)(int)a.y & 0xffu) << 8 | ((u32)(int)a.z & 0xffu) << 16 | (u32)(int)a.w << 24);
			qc[r][NQC - 1] = (int)(((u32)(int)b.x & 0xffu) | ((u32)(int)b.y & 0xffu) << 8 | ((u32)(int)b.z & 0xffu) << 16 | (u32)(int)b.w << 24);
			qd[r] = Qd[r * (D / 32) + li / 4];
		} else {
			qf[r][0] = a.x, qf[r][1 % NQF] = a.y, qf[r][2 % NQF] = a.z, qf[r][3 % NQF] = a.w;
			qf[r][4 % NQF] = b.x, qf[r][5 % NQF] = b.y, qf[r][6 % NQF] = b.z, qf[r][7 % NQF] = b.w;
		}
	}

	float m[R], l[R], acc[R][8];
	bool nan[R];
#pragma unroll
	for (int r = 0; r < R; r++) {
		m[r] = -INFINITY;
		l[r] = 0.0f;
		nan[r] = false;
#pragma unroll
		for (int i = 0; i < 8; i++) acc[r][i] = 0.0f;
	}
	const i64 nbk = tk.nb[1], nbv = tv.nb[1];
	const char* kbase = k + hk * tk.nb[2] + i3k * tk.nb[3];
	const char* vbase = v + hk * tv.nb[2] + i3k * tv.nb[3];
	const i64 kbeg = (i64)split * p.tiles * FA_KT, kend = min(nkv, kbeg + (i64)p.tiles * FA_KT);
	for (i64 kc = kbeg + warp * CK; kc < kend; kc += FV_WARPS * CK) {
		// Mask terms (-Inf: left out): lane c reads row c / CK's of key
		// kc + c % CK (one request for the chunk), and each group takes
		// its keys' by shuffles; live[u]: some row takes the group's key u.
		float mc = -INFINITY;
		{
			const int cr = lane / CK;
			const i64 j = kc + lane % CK;
			bool ok = false;
			const char* mp = 0;
			float sl = 1.0f;
#pragma unroll
			for (int r = 0; r < R; r++)
				if (cr == r) {
					ok = valid[r];
					mp = mrow[r];
					sl = slope[r];
				}
			if (ok && j < kend) {
				mc = 0.0f;
				if (mask) {
					mp += j * tm.nb[0];
					const float mk = p.mtype == KB_F16 ? kb_h2f(*(const u16*)mp) : *(const float*)mp;
					mc = mk == -INFINITY ? -INFINITY : sl * mk;
				}
			}
		}
		if (!__any_sync(0xffffffffu, mc != -INFINITY)) continue;  // the same in every lane
		float mv[U][R];
		bool live[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			live[u] = false;
#pragma unroll
			for (int r = 0; r < R; r++) {
				mv[u][r] = __shfl_sync(0xffffffffu, mc, r * CK + u * KPW + g);
				live[u] |= mv[u][r] != -INFINITY;
			}
		}
		uint4 kr[U], vr[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			kr[u] = make_uint4(0, 0, 0, 0);
			vr[u] = make_uint4(0, 0, 0, 0);
			if (live[u]) {
				const i64 j = kc + u * KPW + g;
				kr[u] = fv_raw<T>(kbase + j * nbk, li);
				vr[u] = fv_raw<T>(vbase + j * nbv, li);
			}
		}
		// Scores, summed over the group's lanes.
		float s[U][R];
#pragma unroll
		for (int u = 0; u < U; u++) {
			float kf[8];
			if (T != KB_Q8_0) fv_dec<T>(kr[u], kf);
#pragma unroll
			for (int r = 0; r < R; r++) {
				float x = 0.0f;
				if (T == KB_Q8_0)
					x = (float)kb_dp4a(qc[r][NQC - 1], (int)kr[u].y, kb_dp4a(qc[r][0], (int)kr[u].x, 0)) * (qd[r] * kb_h2f((u16)kr[u].z));
				else {
#pragma unroll
					for (int i = 0; i < 8; i++) x = fmaf(qf[r][i % NQF], kf[i], x);
				}
#pragma unroll
				for (int o = LPK / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
				s[u][r] = x;
			}
		}
		// Online softmax: s becomes the key's weight exp(s - m).
#pragma unroll
		for (int r = 0; r < R; r++) {
			float cm = -INFINITY;
#pragma unroll
			for (int u = 0; u < U; u++) {
				float x = s[u][r] * p.scale;
				if (p.softcap > 0.0f) x = p.softcap * tanhf(x);
				x = mv[u][r] == -INFINITY ? -INFINITY : x + mv[u][r];
				nan[r] |= x != x;
				s[u][r] = x;
				cm = fmaxf(cm, x);
			}
#pragma unroll
			for (int o = LPK; o < 32; o <<= 1) cm = fmaxf(cm, __shfl_xor_sync(0xffffffffu, cm, o));
			const float mnew = fmaxf(m[r], cm);
			float alpha = 1.0f, sum = 0.0f;
			if (mnew != -INFINITY) alpha = expf(m[r] - mnew);
#pragma unroll
			for (int u = 0; u < U; u++) {
				const float e = mnew == -INFINITY ? 0.0f : expf(s[u][r] - mnew);
				sum += e;
				s[u][r] = e;
			}
			l[r] = l[r] * alpha + sum;
			m[r] = mnew;
#pragma unroll
			for (int i = 0; i < 8; i++) acc[r][i] *= alpha;
		}
		// Weighted values: a zero weight (a masked key) is not multiplied
		// in, so a NaN in its V row stays out.
#pragma unroll
		for (int u = 0; u < U; u++) {
			float vf[8];
			fv_dec<T>(vr[u], vf);
#pragma unroll
			for (int r = 0; r < R; r++) {
				const float w = s[u][r];
#pragma unroll
				for (int i = 0; i < 8; i++) acc[r][i] = w != 0.0f ? fmaf(w, vf[i], acc[r][i]) : acc[r][i];
			}
		}
	}
	// The groups' sums and accumulators (m is the same in all of them).
#pragma unroll
	for (int r = 0; r < R; r++) {
#pragma unroll
		for (int o = LPK; o < 32; o <<= 1) {
			l[r] += __shfl_xor_sync(0xffffffffu, l[r], o);
#pragma unroll
			for (int i = 0; i < 8; i++) acc[r][i] += __shfl_xor_sync(0xffffffffu, acc[r][i], o);
		}
		// A NaN score makes the row NaN: fmaxf passes over it, so with
		// every other key masked it would weigh nothing.
		if (__any_sync(0xffffffffu, nan[r])) l[r] = NAN;
		if (g == 0) {
			float* a = As + (warp * R + r) * LD;
			fv_sts(a + 4 * li, acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
			fv_sts(a + D / 2 + 16 + 4 * li, acc[r][4], acc[r][5], acc[r][6], acc[r][7]);
		}
		if (lane == 0) {
			MLs[(warp * R + r) * 2] = m[r];
			MLs[(warp * R + r) * 2 + 1] = l[r];
		}
	}
	__syncthreads();

	// The warps' results merged: thread t takes dim t of a row.
	const i64 nrows = td.ne[1] * td.ne[2] * td.ne[3];  // output rows (head, query, sequence)
	const int DV = D;
	const uint3 bi = fa_block();  // the K/V head, split and sequence again (fa_block)
	const int ehk = (int)bi.y % (int)nhk, esplit = (int)bi.y / (int)nhk, ei3 = bi.z;
	for (int x = threadIdx.y * 32 + lane; x < R * D; x += FV_WARPS * 32) {
		const int r = x / D, e = x % D, pos = fv_pos<D>(e);
		const i64 rho = (i64)bi.x * R + r;
		if (rho >= nq * G) continue;
		const i64 qi = rho / G, hi = (i64)ehk * G + rho % G;
		float mx = -INFINITY;
		for (int w = 0; w < FV_WARPS; w++) mx = fmaxf(mx, MLs[(w * R + r) * 2]);
		float sum = 0.0f, o = 0.0f;
		for (int w = 0; w < FV_WARPS; w++) {
			const float mw = MLs[(w * R + r) * 2];
			const float a = mw == -INFINITY ? 0.0f : expf(mw - mx);
			sum += a * MLs[(w * R + r) * 2 + 1];  // 0 * NaN: NaN
			if (a != 0.0f) o += a * As[(w * R + r) * LD + pos];
		}
		const i64 orow = hi + nh * (qi + nq * ei3);
		if (p.splits > 1) {
			part[((i64)esplit * nrows + orow) * DV + e] = o;
			if (e == 0) {
				float* ml = part + (i64)p.splits * nrows * DV + ((i64)esplit * nrows + orow) * 2;
				ml[0] = mx;
				ml[1] = sum;
			}
			continue;
		}
		float a = 1.0f;
		const float sk = sinks ? *(const float*)(sinks + hi * ts.nb[0]) : -INFINITY;
		if (sk != -INFINITY) {  // a -Inf sink is none
			const float mn = fmaxf(mx, sk);
			a = expf(mx - mn);
			sum = sum * a + expf(sk - mn);
		}
		const float inv = sum == 0.0f ? 0.0f : a / sum;
		*(float*)(dst + kb_offset(td, e, hi, qi, ei3)) = o * inv;
	}
}

// FV_MINB(T, D, R): the blocks an SM is to hold, the registers a thread
// may take held to 128 (4 blocks) where that does not spill (NVRTC 11.8,
// sm_80 and sm_90): up to 2 rows, and 4 rows of q8_0 K/V (q kept as packed codes)
// with rows of 64 or 128; 168 (3 blocks) for the other 4-row kernels
// (f16 q as 32 floats a lane); 255 for 8 rows (two blocks: 64
// accumulators a lane).
#define FV_MINB(T, D, R) ((R) <= 2 || ((R) == 4 && (T) == KB_Q8_0 && (D) <= 128) ? 4 : (R) == 4 ? 3 : 2)
#define KB_FLASH_ATTN_VEC(TN, T, D, R)                                                                              \
	extern "C" __global__ void __launch_bounds__(128, FV_MINB(T, D, R)) kb_flash_attn_vec_##TN##d##D##_r##R(                                              \
	    const char* q, kb_tensor tq, const char* k, kb_tensor tk, const char* v, kb_tensor tv, const char* mask,   \
	    kb_tensor tm, const char* sinks, kb_tensor ts, char* dst, kb_tensor td, float* part, kb_fa_params p) {   \
		flash_attn_vec<T, D, R>(q, tq, k, tk, v, tv, mask, tm, sinks, ts, dst, td, part, p);                     \
	}
KB_FLASH_ATTN_VEC(, KB_F16, 64, 1)
KB_FLASH_ATTN_VEC(, KB_F16, 64, 2)
KB_FLASH_ATTN_VEC(, KB_F16, 64, 4)
KB_FLASH_ATTN_VEC(, KB_F16, 64, 8)
KB_FLASH_ATTN_VEC(, KB_F16, 128, 1)
KB_FLASH_ATTN_VEC(, KB_F16, 128, 2)
KB_FLASH_ATTN_VEC(, KB_F16, 128, 4)
KB_FLASH_ATTN_VEC(, KB_F16, 128, 8)
KB_FLASH_ATTN_VEC(, KB_F16, 256, 1)
KB_FLASH_ATTN_VEC(, KB_F16, 256, 2)
KB_FLASH_ATTN_VEC(, KB_F16, 256, 4)
KB_FLASH_ATTN_VEC(, KB_F16, 256, 8)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 64, 1)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 64, 2)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 64, 4)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 64, 8)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 128, 1)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 128, 2)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 128, 4)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 128, 8)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 256, 1)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 256, 2)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 256, 4)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 256, 8)
