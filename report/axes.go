package report

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// percentileTicks label the spectrum's x axis, which is 1/(1-q) on a log scale: 1 is 0%, 2 is
// 50%, 10 is 90%, 100 is 99%, 1000 is 99.9% and so on.
type percentileTicks struct{}

func (percentileTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	top := int(math.Ceil(math.Log10(max) - 1e-9))
	for k := 0; k <= top; k++ {
		decade := math.Pow10(k)
		ticks = append(ticks, plot.Tick{Value: decade, Label: nines(k)})
		if k == top {
			break
		}
		for i := 2; i < 10; i++ {
			t := plot.Tick{Value: decade * float64(i)}
			if k == 0 && i == 2 {
				t.Label = "50%"
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// nines returns the percentile of x = 10^k on the spectrum's axis: "0%", "90%", "99%",
// "99.9%", …, written out rather than computed so that no rounding shows.
func nines(k int) string {
	switch k {
	case 0:
		return "0%"
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", k-2) + "%"
}

// latencyTicks label a log axis of microseconds at 1, 2 and 5 of each decade ("200µs",
// "1ms", "5s"); when the range spans more than four decades only the decades are labelled.
type latencyTicks struct{}

func (latencyTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max >= min) {
		return nil
	}
	lo := int(math.Floor(math.Log10(min)))
	hi := int(math.Ceil(math.Log10(max)))
	labelled := func(i int) bool { return i == 1 || (hi-lo <= 4 && (i == 2 || i == 5)) }
	// A range inside one decade may hold none of those: then every tick gets its label.
	inRange := 0
	for k := lo; k <= hi; k++ {
		for i := 1; i < 10; i++ {
			if v := float64(i) * math.Pow10(k); v >= min && v <= max && labelled(i) {
				inRange++
			}
		}
	}
	var ticks []plot.Tick
	for k := lo; k <= hi; k++ {
		for i := 1; i < 10; i++ {
			v := float64(i) * math.Pow10(k)
			t := plot.Tick{Value: v}
			if inRange < 2 || labelled(i) {
				t.Label = formatLatencyTick(v)
			}
			ticks = append(ticks, t)
			if k == hi {
				break
			}
		}
	}
	return ticks
}

// formatLatencyTick writes microseconds in the unit that keeps the number short: "50µs",
// "2ms", "1.5s".
func formatLatencyTick(us float64) string {
	switch {
	case us < 1e3:
		return strconv.FormatFloat(us, 'g', 4, 64) + "µs"
	case us < 1e6:
		return strconv.FormatFloat(us/1e3, 'g', 4, 64) + "ms"
	}
	return strconv.FormatFloat(us/1e6, 'g', 4, 64) + "s"
}

// integerTicks label every whole number of a small range (rounds), else fall back to
// gonum's default ticks.
type integerTicks struct{}

func (integerTicks) Ticks(min, max float64) []plot.Tick {
	first := math.Ceil(min)
	// Counted, not stepped by v++: past 2^53 a float no longer moves by one.
	n := math.Floor(max) - first + 1
	if !(n >= 1 && n <= 31) || first+1 == first {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	var ticks []plot.Tick
	for i := 0; i < int(n); i++ {
		v := first + float64(i)
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ticks
}

// rateTicks label a linear axis every 1, 2 or 5 times a power of ten, whichever gives five to
// ten labels, in plain digits ("40000", not gonum's "4e+04"), with four minor ticks between.
type rateTicks struct{}

func (rateTicks) Ticks(min, max float64) []plot.Tick {
	span := max - min
	if !(span > 0) || math.IsInf(span, 0) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	step := math.Pow10(int(math.Floor(math.Log10(span / 5))))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 10 {
			step *= m
			break
		}
	}
	minor := step / 5
	first := math.Ceil(min / minor)
	// Counted, not stepped by v += minor, which stops moving where minor is below a float's
	// resolution of v; at most 11 labels and their minor ticks.
	var ticks []plot.Tick
	for i := 0; i <= 55; i++ {
		v := (first + float64(i)) * minor
		if v > max {
			break
		}
		t := plot.Tick{Value: v}
		if math.Mod(first+float64(i), 5) == 0 {
			t.Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}
