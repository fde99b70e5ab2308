package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// logSumExp returns log(sum(exp(l))) of the logits, computed in float64
// around the maximum, and the index of the maximum (the lowest among
// equals).
func logSumExp(l []float32) (lse float64, argmax int) {
	mx := l[0]
	for i, v := range l {
		if v > mx {
			mx, argmax = v, i
		}
	}
	var s float64
	m := float64(mx)
	for _, v := range l {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s), argmax
}

// pplStats accumulates the negative log-likelihoods of scored tokens.
type pplStats struct {
	sum, sum2 float64
	n         int
}

func (s *pplStats) add(nll float64) { s.sum += nll; s.sum2 += nll * nll; s.n++ }

// ppl returns exp(mean NLL), the running estimate.
func (s *pplStats) ppl() float64 { return math.Exp(s.sum / float64(s.n)) }

// estimate returns the perplexity exp(m) of the mean NLL m and its
// uncertainty, as llama-perplexity's final estimate: the standard error of
// the mean NLL, sqrt((mean(nll^2) - m^2) / (n-1)), carried through exp by
// its derivative, PPL * that. ok is false when the variance is not positive
// (llama.cpp then prints no estimate).
func (s *pplStats) estimate() (ppl, unc float64, ok bool) {
	n := float64(s.n)
	m := s.sum / n
	v := s.sum2/n - m*m
	ppl = math.Exp(m)
	if v <= 0 || s.n < 2 {
		return ppl, 0, false
	}
	return ppl, ppl * math.Sqrt(v/(n-1)), true
}

// meanUnc returns the mean of n values given their sum and sum of squares,
// and the standard error of that mean, sqrt((sum2/n - mean^2)/(n-1)); the
// error is 0 when the variance is not positive or n <= 10, as llama.cpp's
// KL-divergence statistics do.
func meanUnc(sum, sum2 float64, n int) (mean, unc float64) {
	if n < 1 {
		return 0, 0
	}
	mean = sum / float64(n)
	v := sum2/float64(n) - mean*mean
	if v > 0 && n > 10 {
		unc = math.Sqrt(v / float64(n-1))
	}
	return mean, unc
}

// percentile returns the fraction f quantile of sorted values by linear
// interpolation between the two nearest ranks (f*(n-1)), as llama.cpp.
func percentile(sorted []float64, f float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	if f <= 0 {
		return sorted[0]
	}
	if f >= 1 {
		return sorted[len(sorted)-1]
	}
	p := f * float64(len(sorted)-1)
	i := int(p)
	p -= float64(i)
	j := min(i+1, len(sorted)-1)
	return (1-p)*sorted[i] + p*sorted[j]
}

// median returns the middle value of sorted values, the mean of the two
// middle ones for an even count.
func median(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// kldStats accumulates the comparison of a model Q with the base model over
// scored positions, as llama.cpp's kl_divergence.
type kldStats struct {
	nll, nll2     float64 // Q's NLL of the actual next token
	base, base2   float64 // the base model's NLL
	nllBase       float64 // sum of nll*base, for the covariance
	kld, kld2     float64
	pdiff, pdiff2 float64 // Δp = p_Q(token) - p_base(token)
	pdiff4        float64
	sameTop, n    int
	klds, pdiffs  []float64 // per position, for percentiles
}

// add records one position: Q's and the base's NLL of the next token, the
// KL divergence KL(base || Q) at the position, and whether the most probable
// tokens agree.
func (s *kldStats) add(nll, base, kld float64, same bool) {
	s.nll += nll
	s.nll2 += nll * nll
	s.base += base
	s.base2 += base * base
	s.nllBase += nll * base
	s.kld += kld
	s.kld2 += kld * kld
	pd := math.Exp(-nll) - math.Exp(-base)
	s.pdiff += pd
	s.pdiff2 += pd * pd
	s.pdiff4 += pd * pd * pd * pd
	if same {
		s.sameTop++
	}
	s.n++
	s.klds = append(s.klds, kld)
	s.pdiffs = append(s.pdiffs, pd)
}

// covariance returns the covariance of the two mean NLLs,
// (mean(nll*base) - mean(nll)*mean(base)) / (n-1), 0 below 10 values, as
// llama.cpp.
func (s *kldStats) covariance() float64 {
	if s.n < 10 {
		return 0
	}
	n := float64(s.n)
	return (s.nllBase/n - (s.nll/n)*(s.base/n)) / (n - 1)
}

// lnRatio returns mean ln(PPL(Q)/PPL(base)) = mean NLL(Q) - mean NLL(base)
// and its uncertainty sqrt(uQ^2 + uB^2 - 2 cov).
func (s *kldStats) lnRatio() (v, unc float64) {
	q, uq := meanUnc(s.nll, s.nll2, s.n)
	b, ub := meanUnc(s.base, s.base2, s.n)
	return q - b, math.Sqrt(max(0, uq*uq+ub*ub-2*s.covariance()))
}

// sameTopP returns the fraction of positions whose most probable tokens
// agree and its binomial standard error sqrt(p(1-p)/(n-1)).
func (s *kldStats) sameTopP() (p, unc float64) {
	p = float64(s.sameTop) / float64(s.n)
	if s.n > 1 {
		unc = math.Sqrt(p * (1 - p) / float64(s.n-1))
	}
	return p, unc
}

// rmsPDiff returns the root mean square of Δp and its uncertainty, from the
// mean of Δp^2 and its standard error carried through the square root.
func (s *kldStats) rmsPDiff() (v, unc float64) {
	m, u := meanUnc(s.pdiff2, s.pdiff4, s.n)
	v = math.Sqrt(m)
	if v > 0 {
		unc = 0.5 / v * u
	}
	return v, unc
}

// chunkHeader returns the column header of the per-chunk lines, each title
// centred over its column.
func chunkHeader() string {
	center := func(s string, w int) string {
		n := utf8.RuneCountInString(s)
		if n >= w {
			return s
		}
		l := (w - n) / 2
		return strings.Repeat(" ", l) + s + strings.Repeat(" ", w-n-l)
	}
	return strings.TrimRight(fmt.Sprintf("chunk  %s  %s  %s  %s  %s",
		center("PPL(Q)", 20), center("ln(PPL(Q)/PPL(base))", 22), center("KL divergence", 22),
		center("Δp RMS", 16), center("Same top p", 17)), " ")
}

// chunkLine returns the line of running statistics after chunk i
// (1-based).
func (s *kldStats) chunkLine(i int) string {
	q, uq := meanUnc(s.nll, s.nll2, s.n)
	r, ur := s.lnRatio()
	k, uk := meanUnc(s.kld, s.kld2, s.n)
	rms, urms := s.rmsPDiff()
	p, up := s.sameTopP()
	return fmt.Sprintf("%5d  %9.4f ± %8.4f  %10.5f ± %9.5f  %10.6f ± %9.6f  %6.3f ± %5.3f %%  %7.3f ± %5.3f %%",
		i, math.Exp(q), math.Exp(q)*uq, r, ur, k, uk, 100*rms, 100*urms, 100*p, 100*up)
}

// report writes the final statistics, in llama.cpp's layout.
func (s *kldStats) report(w io.Writer) {
	if s.n == 0 {
		fmt.Fprintln(w, "no positions scored")
		return
	}
	if s.n < 100 {
		fmt.Fprintf(w, "note: only %d positions scored; the statistics are rough\n", s.n)
	}
	q, uq := meanUnc(s.nll, s.nll2, s.n)
	b, ub := meanUnc(s.base, s.base2, s.n)
	pplQ, pplB := math.Exp(q), math.Exp(b)
	cov := s.covariance()
	fmt.Fprintln(w, "====== Perplexity statistics ======")
	fmt.Fprintf(w, "Mean PPL(Q)                   : %10.6f ± %10.6f\n", pplQ, pplQ*uq)
	fmt.Fprintf(w, "Mean PPL(base)                : %10.6f ± %10.6f\n", pplB, pplB*ub)
	if uq > 0 && ub > 0 {
		fmt.Fprintf(w, "Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%\n", 100*cov/(uq*ub))
	}
	r, ur := s.lnRatio()
	fmt.Fprintf(w, "Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f\n", r, ur)
	fmt.Fprintf(w, "Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f\n", math.Exp(r), math.Exp(r)*ur)
	diffU := math.Sqrt(max(0, (pplQ*uq)*(pplQ*uq)+(pplB*ub)*(pplB*ub)-2*pplQ*pplB*cov))
	fmt.Fprintf(w, "Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f\n", pplQ-pplB, diffU)
	fmt.Fprintln(w)

	k, uk := meanUnc(s.kld, s.kld2, s.n)
	kl := slices.Clone(s.klds)
	slices.Sort(kl)
	fmt.Fprintln(w, "====== KL divergence statistics ======")
	fmt.Fprintf(w, "Mean    KLD: %10.6f ± %10.6f\n", k, uk)
	fmt.Fprintf(w, "Maximum KLD: %10.6f\n", kl[len(kl)-1])
	for _, f := range []float64{0.999, 0.99, 0.95, 0.90} {
		fmt.Fprintf(w, "%-5s   KLD: %10.6f\n", pct(f), percentile(kl, f))
	}
	fmt.Fprintf(w, "Median  KLD: %10.6f\n", median(kl))
	for _, f := range []float64{0.10, 0.05, 0.01, 0.001} {
		fmt.Fprintf(w, "%5s   KLD: %10.6f\n", pct(f), percentile(kl, f))
	}
	fmt.Fprintf(w, "Minimum KLD: %10.6f\n", kl[0])
	fmt.Fprintln(w)

	pdm, upd := meanUnc(s.pdiff, s.pdiff2, s.n)
	pd := slices.Clone(s.pdiffs)
	slices.Sort(pd)
	fmt.Fprintln(w, "====== Token probability statistics ======")
	fmt.Fprintf(w, "Mean    Δp: %6.3f ± %5.3f %%\n", 100*pdm, 100*upd)
	fmt.Fprintf(w, "Maximum Δp: %6.3f%%\n", 100*pd[len(pd)-1])
	for _, f := range []float64{0.999, 0.99, 0.95, 0.90, 0.75} {
		fmt.Fprintf(w, "%-5s   Δp: %6.3f%%\n", pct(f), 100*percentile(pd, f))
	}
	fmt.Fprintf(w, "Median  Δp: %6.3f%%\n", 100*median(pd))
	for _, f := range []float64{0.25, 0.10, 0.05, 0.01, 0.001} {
		fmt.Fprintf(w, "%5s   Δp: %6.3f%%\n", pct(f), 100*percentile(pd, f))
	}
	fmt.Fprintf(w, "Minimum Δp: %6.3f%%\n", 100*pd[0])
	rms, urms := s.rmsPDiff()
	fmt.Fprintf(w, "RMS Δp    : %6.3f ± %5.3f %%\n", 100*rms, 100*urms)
	p, up := s.sameTopP()
	fmt.Fprintf(w, "Same top p: %6.3f ± %5.3f %%\n", 100*p, 100*up)
}

// pct writes a fraction as a percentage label: "99.9%", " 5.0%".
func pct(f float64) string { return fmt.Sprintf("%4.1f%%", 100*f) }
