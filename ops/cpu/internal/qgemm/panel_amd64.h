// Offsets shared by the panel kernels (qgemm_amd64.s) and the
// repacking (repack_amd64.s).

// Offsets inside a panel block: the eight rows' f32 scales d_x after the
// 256 code bytes, then the eight int32 corrections (q4_0, q5_0) or the
// eight float32 m_x (q4_1, q5_1).
#define QP_D 256
#define QP_CORR 288
