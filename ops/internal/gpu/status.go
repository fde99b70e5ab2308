package gpu

import "encoding/binary"

// StatusBytes is the size of a backend's status words: an error code and
// a detail (such as a bad index), two little-endian int32s that kernels
// which check their input data write; code 0 is no error.
const StatusBytes = 8

// CheckStatus reads the status words with read (which waits for the
// queued work first) and, when a kernel set them, clears them with reset
// and returns describe's error for the code and detail.
func CheckStatus(read func(w []byte) error, reset func() error, describe func(code, detail int32) error) error {
	var w [StatusBytes]byte
	if err := read(w[:]); err != nil {
		return err
	}
	code := int32(binary.LittleEndian.Uint32(w[0:]))
	if code == 0 {
		return nil
	}
	detail := int32(binary.LittleEndian.Uint32(w[4:]))
	if err := reset(); err != nil {
		return err
	}
	return describe(code, detail)
}

// StatusAt returns the code and detail of status word pair i in w, the
// copy of a backend's status slots.
func StatusAt(w []byte, i int) (code, detail int32) {
	at := StatusBytes * i
	return int32(binary.LittleEndian.Uint32(w[at:])), int32(binary.LittleEndian.Uint32(w[at+4:]))
}
