// The K formats' x8 kernels' prefetches (gemv_x8k_amd64.s and
// gemv_x8k_vnni_amd64.s): each quarter of a block's work prefetches a
// quarter of the lines of the block pfd bytes (R12) ahead of the stream
// at SI, so that one block's work covers one block's lines: 27 lines for
// a q6_K x8 block of 1680 bytes, 18 for a q4_K one of 1152.

#define X8K_PF(OFF) PREFETCHT0 OFF(SI)(R12*1)

#define X8K_PF_Q6K_0 \
	X8K_PF(0); \
	X8K_PF(64); \
	X8K_PF(128); \
	X8K_PF(192); \
	X8K_PF(256); \
	X8K_PF(320); \
	X8K_PF(384)

#define X8K_PF_Q6K_1 \
	X8K_PF(448); \
	X8K_PF(512); \
	X8K_PF(576); \
	X8K_PF(640); \
	X8K_PF(704); \
	X8K_PF(768); \
	X8K_PF(832)

#define X8K_PF_Q6K_2 \
	X8K_PF(896); \
	X8K_PF(960); \
	X8K_PF(1024); \
	X8K_PF(1088); \
	X8K_PF(1152); \
	X8K_PF(1216); \
	X8K_PF(1280)

#define X8K_PF_Q6K_3 \
	X8K_PF(1344); \
	X8K_PF(1408); \
	X8K_PF(1472); \
	X8K_PF(1536); \
	X8K_PF(1600); \
	X8K_PF(1664)

#define X8K_PF_Q4K_0 \
	X8K_PF(0); \
	X8K_PF(64); \
	X8K_PF(128); \
	X8K_PF(192); \
	X8K_PF(256)

#define X8K_PF_Q4K_1 \
	X8K_PF(320); \
	X8K_PF(384); \
	X8K_PF(448); \
	X8K_PF(512); \
	X8K_PF(576)

#define X8K_PF_Q4K_2 \
	X8K_PF(640); \
	X8K_PF(704); \
	X8K_PF(768); \
	X8K_PF(832)

#define X8K_PF_Q4K_3 \
	X8K_PF(896); \
	X8K_PF(960); \
	X8K_PF(1024); \
	X8K_PF(1088)
