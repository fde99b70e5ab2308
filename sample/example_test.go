package sample_test

import (
	"fmt"

	"github.com/kernbench/kernbench/sample"
)

func ExampleFromParams() {
	p := sample.DefaultParams()
	p.Temp = 0 // greedy
	p.RepeatPenalty = 1.5
	c, err := sample.FromParams(p, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Names())
	logits := []float32{1, 3, 2.5, 0}
	for range 3 {
		id, err := c.Sample(logits)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Print(id, " ")
	}
	fmt.Println()
	// Output:
	// [penalties greedy]
	// 1 2 1
}

func ExampleNewChain() {
	c := sample.NewChain(1, sample.TopK(2), sample.Temperature(0.5), sample.Dist(42))
	id, err := c.Sample([]float32{0.1, 2, 1.5, -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Names(), id == 1 || id == 2, c.Last().Len())
	// Output: [top-k temp dist] true 2
}
