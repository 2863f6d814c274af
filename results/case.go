package results

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Label is one name=value part of a Case. It is a plain value and safe for
// concurrent use.
type Label struct {
	// Name is the JSON name of the Run field ("topology" for the topology as
	// the user named it, see Run.Case).
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Case is what a run ran, apart from which driver ran it and which
// repetition it was: workload, topology, concurrency, keys and every other
// Run field tagged `lockbench:"case"`. Runs of one case are comparable: their
// drivers side by side, their repetitions as samples of one distribution. It
// is a plain value and safe for concurrent use.
type Case []Label

// String is the labels as "name=value" separated by spaces, in field order;
// equal cases give equal strings, so it serves as a map key.
func (c Case) String() string {
	var b strings.Builder
	for i, l := range c {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l.Name)
		b.WriteByte('=')
		b.WriteString(l.Value)
	}
	return b.String()
}

// Get returns the value of the label called name, or "" when c has none.
func (c Case) Get(name string) string {
	for _, l := range c {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

// caseTag marks the Run fields that make up a Case. Tagging a field is all it
// takes for a new configuration field (open-loop pacing, a target rate) to
// keep apart runs that differ in it, in summaries, gates and comparisons.
const caseTag = "case"

// caseOmitZero, after caseTag ("case,omitzero"), leaves a field out of the
// case while it is zero: a field that only some runs use (an open loop's
// rate) then leaves the cases of the others, and of older files, as they were.
const caseOmitZero = "omitzero"

// caseField is one tagged Run field: its index and JSON name.
type caseField struct {
	index    []int
	name     string
	omitZero bool
}

var caseFields = sync.OnceValue(func() []caseField {
	var out []caseField
	t := reflect.TypeFor[Run]()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, opt, _ := strings.Cut(f.Tag.Get("lockbench"), ",")
		if tag != caseTag {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, caseField{f.Index, name, opt == caseOmitZero})
	}
	return out
})

// Case returns what r ran: its workload, then the topology as the user named
// it (TopologySpec, or Topology in files from before specs), then every other
// field tagged `lockbench:"case"` in declaration order, but those tagged
// `lockbench:"case,omitzero"` while zero. It is safe for
// concurrent use.
func (r *Run) Case() Case {
	v := reflect.ValueOf(r).Elem()
	c := make(Case, 0, len(caseFields())+1)
	for _, f := range caseFields() {
		fv := v.FieldByIndex(f.index)
		if f.omitZero && fv.IsZero() {
			continue
		}
		c = append(c, Label{f.name, caseValue(fv)})
		if f.name == "workload" {
			c = append(c, Label{"topology", topologyLabel(r)})
		}
	}
	return c
}

// caseValue formats a field's value so that equal values give equal text.
func caseValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	}
	return fmt.Sprint(v.Interface())
}
