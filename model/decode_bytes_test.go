package model

import (
	"strings"
	"testing"

	"github.com/kernbench/kernbench/gguf"
)

// namedSynth is a synthetic model with a name for a subtest.
type namedSynth struct {
	name string
	s    synth
}

// archSynths are a synthetic model of each architecture.
func archSynths() []namedSynth {
	return []namedSynth{
		{"llama", defaultSynth()},
		{"mixtral", mixtralSynth()},
		{"gpt-oss", gptOSSSynth()},
		{"mamba", mambaSynth()},
		{"mamba2", mamba2Synth()},
	}
}

func TestDecodeWeightBytes(t *testing.T) {
	tied := defaultSynth()
	tied.tied = true
	for _, c := range append(archSynths(), namedSynth{"llama tied", tied}) {
		t.Run(c.name, func(t *testing.T) {
			f, err := gguf.Parse(c.s.bytes(t))
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeWeightBytes(f)
			if err != nil {
				t.Fatal(err)
			}
			// The synthetic tensors are all f32: 4 bytes an element.
			var want, experts int64
			for _, st := range c.s.tensors() {
				n := int64(4)
				for _, d := range st.ne {
					n *= d
				}
				switch {
				case st.name == "token_embd.weight" && !c.s.tied:
					n = 4 * st.ne[0] // one row of the table
				case strings.Contains(st.name, "_exps."):
					experts += n
					n = n / int64(c.s.nExpert) * int64(c.s.nExpertUsed)
				}
				want += n
			}
			if (c.s.nExpert > 0) != (experts > 0) {
				t.Fatalf("%d expert bytes with %d experts: the case does not test what it says", experts, c.s.nExpert)
			}
			if got != want {
				t.Errorf("DecodeWeightBytes = %d, want %d", got, want)
			}
		})
	}
}

func TestDecodeWeightBytesBadExperts(t *testing.T) {
	s := mixtralSynth()
	s.shapes = map[string][]int64{"blk.0.ffn_up_exps.weight": {int64(s.nEmbd), int64(s.nFF), 3}}
	f, err := gguf.Parse(s.bytes(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeWeightBytes(f); err == nil || !strings.Contains(err.Error(), "ffn_up_exps") {
		t.Errorf("3 experts in a tensor of a 4-expert model: err %v, want one naming the tensor", err)
	}
}

// TestDecodeStateBytes: a Mamba layer's conv and SSM states, read and
// written once a step, f32; nothing for a model without them.
func TestDecodeStateBytes(t *testing.T) {
	for _, c := range archSynths() {
		t.Run(c.name, func(t *testing.T) {
			f, err := gguf.Parse(c.s.bytes(t))
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeStateBytes(f)
			if err != nil {
				t.Fatal(err)
			}
			h, err := HparamsFromGGUF(f)
			if err != nil {
				t.Fatal(err)
			}
			var want int64
			if h.Recurrent() {
				// The cache's own shapes: what a step reads and writes.
				m, err := newRSMemory(h, ContextParams{NSeqMax: 1}, backend(t))
				if err != nil {
					t.Fatal(err)
				}
				for il := range m.ssm {
					want += 2 * (m.ssm[il].NumElements() + m.conv[il].NumElements()) * 4
				}
				if want == 0 {
					t.Fatal("a recurrent model without states: the case does not test what it says")
				}
			}
			if got != want {
				t.Errorf("DecodeStateBytes = %d, want %d", got, want)
			}
		})
	}
}
