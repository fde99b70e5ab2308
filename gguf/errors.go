package gguf

import (
	"errors"
	"fmt"
)

// Errors that errors returned by this package wrap, for callers that need
// to tell cases apart with errors.Is.
var (
	// ErrTruncated: the file ends inside a field, or a length or count
	// asks for more bytes than remain.
	ErrTruncated = errors.New("file is truncated")
	// ErrVersion: the file's version is not 2 or 3 (version 1, a future
	// version, or a big-endian file).
	ErrVersion = errors.New("unsupported GGUF version")
	// ErrKeyNotFound: a typed getter was asked for a key the file lacks.
	ErrKeyNotFound = errors.New("key not found")
	// ErrKeyType: a typed getter found its key holding a value of another
	// type, or one out of the requested type's range.
	ErrKeyType = errors.New("key has another type")
	// ErrClosed: tensor data was asked of a closed File.
	ErrClosed = errors.New("file is closed")
)

// A FormatError reports a malformed file: the byte offset of the field at
// fault, which field it is, and what is wrong with it.
type FormatError struct {
	// Offset is the byte offset of the field in the file.
	Offset int64
	// Field names the field, e.g. `KV 3 ("general.name"): value`.
	Field string
	// Msg says what is wrong.
	Msg string
	// Err is an underlying error such as ErrTruncated,
	// quant.ErrRowLength or ErrVersion, or nil.
	Err error
}

// Error returns "gguf: FIELD at offset N: MSG".
func (e *FormatError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("gguf: offset %d: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("gguf: %s at offset %d: %s", e.Field, e.Offset, e.Msg)
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// within prefixes the field of a *FormatError with the name of the
// structure that contains it, and returns other errors unchanged.
func within(err error, outer string) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		if fe.Field == "" {
			fe.Field = outer
		} else {
			fe.Field = outer + ": " + fe.Field
		}
	}
	return err
}
