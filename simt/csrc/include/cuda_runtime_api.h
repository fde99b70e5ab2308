// cuda_runtime_api.h: the SIMT emulator provides this header through kbsimt_cuda.h.
#include "kbsimt_cuda.h"
