package metal

// Kernel arguments are a struct each kernel declares (kernels/*.metal)
// and takes as `constant Args& args [[buffer(0)]]`; the host writes its
// bytes with gpu.CStruct, in the order and with the types of the struct's
// fields, and binds them with setBytes (args).

// b32 is a bool as a kernel's int field: 1 or 0.
func b32(v bool) int32 {
	if v {
		return 1
	}
	return 0
}
