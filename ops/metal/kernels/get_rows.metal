// get_rows.metal: GET_ROWS from a table of any weight type (f32 out; an i32
// table copies i32), one output row per threadgroup, its threads along
// the row.
#include "quants.h"

struct kb_rows_args {
	kb_tensor a, ids, d;
};

// kb_row_id reads the id of output row (i1, i2, i3) and checks it against
// the table's rows: a bad id sets the status words (1, the id) and gives
// -1.
inline long kb_row_id(constant kb_rows_args &args, device const char *ids, long i1, long i2, long i3,
		device atomic_int *status, ushort tpitg) {
	long id = *(device const int *)(ids + i1 * args.ids.nb[0] + i2 * args.ids.nb[1] + i3 * args.ids.nb[2]);
	if (id < 0 || id >= args.a.ne[1]) {
		if (tpitg == 0) {
			atomic_fetch_max_explicit(&status[0], 1, memory_order_relaxed);
			atomic_exchange_explicit(&status[1], int(id), memory_order_relaxed);
		}
		return -1;
	}
	return id;
}

template <int T>
kernel void kb_get_rows(
		constant kb_rows_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device const char *ids [[buffer(2)]],
		device char *d [[buffer(3)]],
		device atomic_int *status [[buffer(4)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]]) {
	const long i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
	long id = kb_row_id(args, ids, i1, i2, i3, status, tpitg);
	if (id < 0) return;
	device const uchar *row = (device const uchar *)(a + kb_row(args.a, id, i2, i3));
	device char *out = d + kb_row(args.d, i1, i2, i3);
	for (long i = tpitg; i < args.d.ne[0]; i += ntg) *(device float *)(out + i * args.d.nb[0]) = kb_at<T>(row, i);
}

typedef decltype(kb_get_rows<KB_F32>) kb_get_rows_t;
#define KB_GET_ROWS(name, T) template [[host_name(KB_STR(kb_get_rows_##name))]] kernel kb_get_rows_t kb_get_rows<T>;
KB_FOR_WEIGHT_TYPES(KB_GET_ROWS)

// An i32 table copies its ints unconverted.
kernel void kb_get_rows_i32(
		constant kb_rows_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device const char *ids [[buffer(2)]],
		device char *d [[buffer(3)]],
		device atomic_int *status [[buffer(4)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]]) {
	const long i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
	long id = kb_row_id(args, ids, i1, i2, i3, status, tpitg);
	if (id < 0) return;
	device const char *row = a + kb_row(args.a, id, i2, i3);
	device char *out = d + kb_row(args.d, i1, i2, i3);
	for (long i = tpitg; i < args.d.ne[0]; i += ntg) *(device int *)(out + i * args.d.nb[0]) = *(device const int *)(row + i * args.a.nb[0]);
}
