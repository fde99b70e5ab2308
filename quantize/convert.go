package quantize

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/quant"
)

// Summary reports what Quantize did.
type Summary struct {
	// Decisions holds one entry per tensor, in file order.
	Decisions []Decision
	// BytesIn and BytesOut are the tensor data sizes before and after.
	BytesIn, BytesOut int64
	// Elements is the number of tensor elements (weights) in all.
	Elements int64
	// Fallbacks counts the tensors that got a fallback type;
	// Requantized those converted from one quantized type to another.
	Fallbacks, Requantized int
	// FileSize is the size of the file written.
	FileSize int64
}

// BitsPerWeight returns the bits of tensor data per element, over all
// tensors, after quantization (as llama.cpp's loader reports it).
func (s Summary) BitsPerWeight() float64 {
	if s.Elements == 0 {
		return 0
	}
	return 8 * float64(s.BytesOut) / float64(s.Elements)
}

// Metadata returns f's metadata with general.file_type set to ft and
// general.quantization_version to QuantizationVersion: existing entries
// are replaced where they are, missing ones appended; every other entry
// is kept as it is.
func Metadata(f *gguf.File, ft FileType, extra ...Entry) []Entry {
	md := make([]Entry, 0, len(f.KV)+2)
	var hasFT, hasQV bool
	for _, kv := range f.KV {
		switch kv.Key {
		case KeyFileType:
			md = append(md, Entry{KeyFileType, uint32(ft)})
			hasFT = true
		case KeyQuantizationVersion:
			md = append(md, Entry{KeyQuantizationVersion, uint32(QuantizationVersion)})
			hasQV = true
		default:
			md = append(md, Entry{kv.Key, kv.Value})
		}
	}
	if !hasQV {
		md = append(md, Entry{KeyQuantizationVersion, uint32(QuantizationVersion)})
	}
	if !hasFT {
		md = append(md, Entry{KeyFileType, uint32(ft)})
	}
	for _, e := range extra {
		replaced := false
		for i := range md {
			if md[i].Key == e.Key {
				md[i], replaced = e, true
			}
		}
		if !replaced {
			md = append(md, e)
		}
	}
	return md
}

// Metadata keys llama-quantize adds when it uses an importance matrix.
const (
	KeyImatrixFile    = "quantize.imatrix.file"
	KeyImatrixDataset = "quantize.imatrix.dataset"
	KeyImatrixEntries = "quantize.imatrix.entries_count"
	KeyImatrixChunks  = "quantize.imatrix.chunks_count"
)

// imatrixMetadata returns the entries llama-quantize records about the
// importance matrix p uses (none without one): its file (at most 127
// bytes, as llama-quantize truncates it), first dataset, entry count and,
// when positive, chunk count.
func imatrixMetadata(p Params) []Entry {
	m := p.Imatrix
	if m == nil {
		return nil
	}
	trunc := func(s string) string {
		if len(s) > 127 {
			return s[:127]
		}
		return s
	}
	md := []Entry{{KeyImatrixFile, trunc(p.ImatrixFile)}}
	if len(m.Datasets) > 0 {
		md = append(md, Entry{KeyImatrixDataset, trunc(m.Datasets[0])})
	}
	md = append(md, Entry{KeyImatrixEntries, uint32(len(m.Entries))})
	if m.ChunkCount > 0 {
		md = append(md, Entry{KeyImatrixChunks, uint32(m.ChunkCount)})
	}
	return md
}

// weightsFor returns the importance weights for tensor d from p's matrix,
// as llama-quantize picks them: nil without a matrix or an entry for the
// tensor; the entry's weights when they number ne[0]*ne[2] (per column,
// per expert); an error for any other size, except for
// token_embd.weight, which then goes without (llama-quantize's rule). A
// tensor whose type needs weights and gets none is an error.
func weightsFor(d Decision, p Params) ([]float32, error) {
	var w []float32
	if p.Imatrix != nil {
		w = p.Imatrix.Weights(d.Name)
		if w != nil && int64(len(w)) != d.Ne[0]*d.Ne[2] {
			if d.Name != "token_embd.weight" {
				return nil, fmt.Errorf("quantize: the importance matrix has %d weights for tensor %s, which needs %d (ne[0] * ne[2])", len(w), d.Name, d.Ne[0]*d.Ne[2])
			}
			w = nil
		}
	}
	if w == nil && d.NeedsImatrix {
		return nil, fmt.Errorf("quantize: missing importance matrix for tensor %s, which %v %w", d.Name, d.To, ErrNeedsImatrix)
	}
	return w, nil
}

// Quantize rewrites the GGUF file in into a new file at outPath under p:
// each tensor gets the type Plan decides (its data dequantized to float32
// row by row and encoded in the new type, or copied when the type does
// not change), the metadata is kept, with general.file_type and
// general.quantization_version set. It prints a line per tensor to log
// (name, shape, old and new type, sizes, the rule and any fallback) and a
// total at the end (log may be nil). A row with a NaN or an infinity is
// an error naming the tensor and row, and leaves no file behind.
func Quantize(in *gguf.File, outPath string, p Params, log io.Writer) (Summary, error) {
	return quantize(in, p, log, func(md []Entry, specs []TensorSpec, fill func(int, []byte) error) (int64, error) {
		return WriteFile(outPath, md, specs, fill)
	})
}

// QuantizeTo is Quantize into out, an empty file open for reading and
// writing whose out.Name() is its path (see Write), such as a temporary
// file the caller renames into place when QuantizeTo succeeds.
func QuantizeTo(in *gguf.File, out *os.File, p Params, log io.Writer) (Summary, error) {
	return quantize(in, p, log, func(md []Entry, specs []TensorSpec, fill func(int, []byte) error) (int64, error) {
		return Write(out, md, specs, fill)
	})
}

// quantize is Quantize with the file written by write.
func quantize(in *gguf.File, p Params, log io.Writer, write func([]Entry, []TensorSpec, func(int, []byte) error) (int64, error)) (Summary, error) {
	if log == nil {
		log = io.Discard
	}
	ds, err := Plan(in, p)
	if err != nil {
		return Summary{}, err
	}
	threads := p.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	sum := Summary{Decisions: ds}
	specs := make([]TensorSpec, len(ds))
	for i, d := range ds {
		specs[i] = TensorSpec{Name: d.Name, Type: d.To, Ne: append([]int64(nil), d.Ne[:d.NDims]...)}
		sum.BytesIn += d.Bytes(d.Type)
		sum.BytesOut += d.Bytes(d.To)
		sum.Elements += d.Elements()
		if d.Fallback != "" {
			sum.Fallbacks++
		}
		if d.Requantized() {
			sum.Requantized++
		}
	}
	fmt.Fprintf(log, "quantize: %d tensors to %s (file_type %d), %d threads\n", len(ds), p.Scheme.Name, p.Scheme.FileType, threads)
	fill := func(i int, buf []byte) error {
		d := ds[i]
		src, err := in.TensorData(d.Name)
		if err != nil {
			return fmt.Errorf("quantize: %w", err)
		}
		if d.Convert() {
			var w []float32
			if w, err = weightsFor(d, p); err == nil {
				err = convert(d, src, buf, threads, w)
			}
		} else if len(src) != len(buf) {
			err = fmt.Errorf("quantize: tensor %s has %d bytes of data, want %d", d.Name, len(src), len(buf))
		} else {
			copy(buf, src)
		}
		if err != nil {
			return err
		}
		printDecision(log, i, len(ds), d)
		return nil
	}
	if m := p.Imatrix; m != nil {
		fmt.Fprintf(log, "quantize: importance matrix %s: %d entries, %d chunks of %d, datasets %q\n", p.ImatrixFile, len(m.Entries), m.ChunkCount, m.ChunkSize, m.Datasets)
	}
	sum.FileSize, err = write(Metadata(in, p.Scheme.FileType, imatrixMetadata(p)...), specs, fill)
	if err != nil {
		return sum, err
	}
	fmt.Fprintf(log, "model size: %s -> %s (%.1f%%), %d weights, %.2f bits per weight; file %s\n",
		human(sum.BytesIn), human(sum.BytesOut), 100*float64(sum.BytesOut)/float64(max(sum.BytesIn, 1)),
		sum.Elements, sum.BitsPerWeight(), human(sum.FileSize))
	if sum.Fallbacks > 0 {
		fmt.Fprintf(log, "%d tensors fell back to another type (marked FALLBACK above)\n", sum.Fallbacks)
	}
	if sum.Requantized > 0 {
		fmt.Fprintf(log, "warning: %d tensors were already quantized and were requantized: their error adds to the first quantization's; quantize from the f32/f16 original where you can\n", sum.Requantized)
	}
	return sum, nil
}

// printDecision writes one tensor's line.
func printDecision(w io.Writer, i, n int, d Decision) {
	note := d.Rule
	if d.Fallback != "" {
		note = fmt.Sprintf("%s; FALLBACK from %v: %s", note, d.Chosen, d.Fallback)
	}
	if d.Requantized() {
		note += "; warning: requantizing from " + d.Type.String()
	}
	fmt.Fprintf(w, "[%*d/%d] %-28s %-14s %5v -> %-5v %10s -> %-10s %s\n",
		len(fmt.Sprint(n)), i+1, n, d.Name, d.Shape(), d.Type, d.To, human(d.Bytes(d.Type)), human(d.Bytes(d.To)), note)
}

// human formats a byte count.
func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// convert decodes the rows of src (type d.Type) and encodes them into dst
// (type d.To) with importance weights w (nil or d.Ne[0] per matrix),
// splitting the rows over threads goroutines.
func convert(d Decision, src, dst []byte, threads int, w []float32) error {
	if want := d.Bytes(d.Type); int64(len(src)) != want {
		return fmt.Errorf("quantize: tensor %s has %d bytes of data, want %d", d.Name, len(src), want)
	}
	return ConvertRowsWeighted(d.Name, d.Type, d.To, d.Ne[0], src, dst, threads, w)
}

// ConvertRows converts rows of n elements from type from in src to type to
// in dst, over threads goroutines (<= 0: one per CPU). src and dst must
// hold the same number of whole rows. A row with a NaN or infinity is an
// error naming the tensor name and the row.
func ConvertRows(name string, from, to quant.Type, n int64, src, dst []byte, threads int) error {
	return ConvertRowsWeighted(name, from, to, n, src, dst, threads, nil)
}

// ConvertRowsWeighted is ConvertRows through quant.QuantizeRowWeighted,
// as llama-quantize quantizes: w is nil or holds importance weights for
// k matrices of the rows (n per matrix; the rows split evenly among them,
// as an expert stack's), and each row gets its matrix's weights.
func ConvertRowsWeighted(name string, from, to quant.Type, n int64, src, dst []byte, threads int, w []float32) error {
	srs, err := from.RowSize(n)
	if err != nil {
		return fmt.Errorf("quantize: tensor %s: %w", name, err)
	}
	drs, err := to.RowSize(n)
	if err != nil {
		return fmt.Errorf("quantize: tensor %s: %w", name, err)
	}
	if n <= 0 || int64(len(src))%srs != 0 || int64(len(dst))/drs != int64(len(src))/srs || int64(len(dst))%drs != 0 {
		return fmt.Errorf("quantize: tensor %s: %d source bytes and %d destination bytes are not the same whole number of rows", name, len(src), len(dst))
	}
	rows := int64(len(src)) / srs
	var nmat int64
	if w != nil {
		nmat = int64(len(w)) / n
		if nmat == 0 || int64(len(w))%n != 0 || rows%nmat != 0 {
			return fmt.Errorf("quantize: tensor %s: %d importance weights do not fit %d rows of %d", name, len(w), rows, n)
		}
	}
	return ParallelRows(rows, threads, func(r0, r1 int64) error {
		row := make([]float32, n)
		for r := r0; r < r1; r++ {
			if err := quant.DequantizeRow(from, src[r*srs:(r+1)*srs], row); err != nil {
				return fmt.Errorf("quantize: tensor %s row %d: %w", name, r, err)
			}
			for j, v := range row {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return fmt.Errorf("quantize: tensor %s row %d column %d is %v: refusing to convert a non-finite value", name, r, j, v)
				}
			}
			var qw []float32
			if w != nil {
				k := r / (rows / nmat)
				qw = w[k*n : (k+1)*n]
			}
			if err := quant.QuantizeRowWeighted(to, row, dst[r*drs:(r+1)*drs], qw); err != nil {
				return fmt.Errorf("quantize: tensor %s row %d: %w", name, r, err)
			}
		}
		return nil
	})
}

// ParallelRows calls work on contiguous ranges [r0, r1) that cover rows,
// from up to threads goroutines (<= 0: one per CPU), and returns the
// error of the lowest range that failed.
func ParallelRows(rows int64, threads int, work func(r0, r1 int64) error) error {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	nw := int64(threads)
	if nw > rows {
		nw = rows
	}
	if nw <= 1 {
		if rows == 0 {
			return nil
		}
		return work(0, rows)
	}
	errs := make([]error, nw)
	var wg sync.WaitGroup
	for w := range nw {
		r0, r1 := rows*w/nw, rows*(w+1)/nw
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = work(r0, r1)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
