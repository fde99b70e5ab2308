// dequant_test.metal: TestWholeBlockDecoders' kernels. Thread c decodes
// elements 16c .. 16c+15 of a row with the whole-block decoder
// (kb_row16) into out, and with the element-at-a-time one (kb_at) into
// ref.
#include "dequant.h"

template <int T>
kernel void kb_test_dq16(
		device const uchar *row [[buffer(0)]],
		device float *out [[buffer(1)]],
		device float *ref [[buffer(2)]],
		uint c [[thread_position_in_grid]]) {
	float y[16];
	kb_row16<T>(row, c, y);
	for (int t = 0; t < 16; t++) {
		out[16 * c + t] = y[t];
		ref[16 * c + t] = kb_at<T>(row, 16 * long(c) + t);
	}
}

typedef decltype(kb_test_dq16<KB_F32>) kb_test_dq16_t;
#define KB_TEST_DQ16(name, T) template [[host_name(KB_STR(kb_test_dq16_##name))]] kernel kb_test_dq16_t kb_test_dq16<T>;
KB_FOR_WEIGHT_TYPES(KB_TEST_DQ16)
