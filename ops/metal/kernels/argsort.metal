// argsort.metal: ARGSORT, a stable sort of each row's indices by value (NaN
// below every number), by a bitonic sort in threadgroup memory: the row
// padded to a power of two, each entry a value and its index, compared
// by value and then by index, so the order is total and the result is the
// stable sort's in both directions.
#include "common.h"

struct kb_argsort_args {
	kb_tensor a, d;
	int desc;
	int npad; // the row length rounded up to a power of two
};

// kb_cmp orders values with NaN below every number, NaN equal to NaN.
inline int kb_cmp(float x, float y) {
	const bool xn = isnan(x), yn = isnan(y);
	if (xn || yn) return xn && !yn ? -1 : (!xn && yn ? 1 : 0);
	return x < y ? -1 : (x > y ? 1 : 0);
}

// kb_before reports whether entry (va, ia) sorts before (vb, ib); entries
// at n and past are padding, after every real one.
inline bool kb_before(float va, int ia, float vb, int ib, int n, int desc) {
	const bool pa = ia >= n, pb = ib >= n;
	if (pa != pb) return pb;
	if (!pa) {
		const int c = desc ? kb_cmp(vb, va) : kb_cmp(va, vb);
		if (c != 0) return c < 0;
	}
	return ia < ib;
}

kernel void kb_argsort_f32(
		constant kb_argsort_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device char *d [[buffer(2)]],
		threadgroup float *vals [[threadgroup(0)]],
		threadgroup int *idx [[threadgroup(1)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]]) {
	device const char *ar = a + kb_row(args.a, tgpig.x, tgpig.y, tgpig.z);
	const int n = int(args.a.ne[0]), P = args.npad;
	for (int i = tpitg; i < P; i += ntg) {
		vals[i] = i < n ? *(device const float *)(ar + i * args.a.nb[0]) : 0.0f;
		idx[i] = i;
	}
	threadgroup_barrier(mem_flags::mem_threadgroup);
	for (int k = 2; k <= P; k <<= 1) {
		for (int j = k >> 1; j > 0; j >>= 1) {
			for (int i = tpitg; i < P; i += ntg) {
				const int l = i ^ j;
				if (l > i) {
					const bool up = (i & k) == 0;
					const float vi = vals[i], vl = vals[l];
					const int ii = idx[i], il = idx[l];
					const bool swap = up ? kb_before(vl, il, vi, ii, n, args.desc) : kb_before(vi, ii, vl, il, n, args.desc);
					if (swap) {
						vals[i] = vl;
						vals[l] = vi;
						idx[i] = il;
						idx[l] = ii;
					}
				}
			}
			threadgroup_barrier(mem_flags::mem_threadgroup);
		}
	}
	device char *dr = d + kb_row(args.d, tgpig.x, tgpig.y, tgpig.z);
	for (int i = tpitg; i < n; i += ntg) *(device int *)(dr + i * args.d.nb[0]) = idx[i];
}

// Rows longer than a threadgroup's memory holds are sorted in device
// memory: kb_argsort_init copies each row (padded) into scratch, a
// dispatch of kb_argsort_step per stage (k, j) of the bitonic network
// compares and swaps the pairs (i, i^j), and kb_argsort_out writes the
// indices. A threadgroup takes 256 entries of one row (grid: entries/256
// x rows).

struct kb_argsort_pass_args {
	kb_tensor a, d;
	int desc, npad;
	int k, j;
};

inline void kb_row_coords(constant kb_tensor &t, long r, thread long &i1, thread long &i2, thread long &i3) {
	i1 = r % t.ne[1];
	i2 = (r / t.ne[1]) % t.ne[2];
	i3 = r / (t.ne[1] * t.ne[2]);
}

kernel void kb_argsort_init(
		constant kb_argsort_pass_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device float *vals [[buffer(2)]],
		device int *idx [[buffer(3)]],
		uint3 tpig [[thread_position_in_grid]]) {
	const long i = tpig.x, r = tpig.y;
	if (i >= args.npad) return;
	long i1, i2, i3;
	kb_row_coords(args.a, r, i1, i2, i3);
	const long n = args.a.ne[0];
	vals[r * args.npad + i] = i < n ? *(device const float *)(a + kb_row(args.a, i1, i2, i3) + i * args.a.nb[0]) : 0.0f;
	idx[r * args.npad + i] = int(i);
}

kernel void kb_argsort_step(
		constant kb_argsort_pass_args &args [[buffer(0)]],
		device float *vals [[buffer(1)]],
		device int *idx [[buffer(2)]],
		uint3 tpig [[thread_position_in_grid]]) {
	const long i = tpig.x, r = tpig.y;
	const long l = i ^ args.j;
	if (i >= args.npad || l <= i) return;
	device float *v = vals + r * args.npad;
	device int *x = idx + r * args.npad;
	const bool up = (i & args.k) == 0;
	const int n = int(args.a.ne[0]);
	const float vi = v[i], vl = v[l];
	const int ii = x[i], il = x[l];
	if (up ? kb_before(vl, il, vi, ii, n, args.desc) : kb_before(vi, ii, vl, il, n, args.desc)) {
		v[i] = vl;
		v[l] = vi;
		x[i] = il;
		x[l] = ii;
	}
}

kernel void kb_argsort_out(
		constant kb_argsort_pass_args &args [[buffer(0)]],
		device const int *idx [[buffer(1)]],
		device char *d [[buffer(2)]],
		uint3 tpig [[thread_position_in_grid]]) {
	const long i = tpig.x, r = tpig.y;
	if (i >= args.d.ne[0]) return;
	long i1, i2, i3;
	kb_row_coords(args.d, r, i1, i2, i3);
	*(device int *)(d + kb_row(args.d, i1, i2, i3) + i * args.d.nb[0]) = idx[r * args.npad + i];
}
