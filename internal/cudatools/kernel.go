package cudatools

import (
	"fmt"
	"sort"
)

// A Kernel is what the tools say about one entry function of a cubin:
// ptxas's resources and the SASS instruction mix.
type Kernel struct {
	Resources
	SASS SASS
}

// Join pairs ptxas's reports with the SASS listing of the same cubin by
// function name. Every entry function must be in both: a kernel in one
// and not the other means the two came from different builds. Device
// functions the listing shows on their own are ignored. The kernels come
// in name order.
func Join(res []Resources, sass []SASS) ([]Kernel, error) {
	byName := map[string]SASS{}
	for _, s := range sass {
		byName[s.Name] = s
	}
	out := make([]Kernel, 0, len(res))
	for _, r := range res {
		s, ok := byName[r.Name]
		if !ok {
			return nil, fmt.Errorf("kernel %s is in ptxas's report but not in the SASS listing", r.Name)
		}
		if s.Arch != "" && s.Arch != r.Arch {
			return nil, fmt.Errorf("kernel %s: ptxas built it for %s, the SASS listing is for %s", r.Name, r.Arch, s.Arch)
		}
		out = append(out, Kernel{Resources: r, SASS: s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
