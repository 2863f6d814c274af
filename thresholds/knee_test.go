package thresholds

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

func TestParseKnee(t *testing.T) {
	for _, expr := range []string{"lockcore knee>=10000", "capacity>=5e4", "lockcore/naive knee>=2x", "knee<1000000"} {
		if _, err := ParseKnee(expr); err != nil {
			t.Errorf("ParseKnee(%q): %v", expr, err)
		}
	}
	for expr, want := range map[string]string{
		"p99<5ms":            "gated on knee or capacity",
		"lockcore knee":      "no operator",
		"knee>=":             "no value",
		"a/a knee>=1":        "to itself",
		"knee>=fast":         "",
		"x y knee>=1":        "want [DRIVER",
		"lockcore/ knee>=1":  "DRIVER/BASE",
		"lockcore knee=>100": "",
	} {
		_, err := ParseKnee(expr)
		if !errors.Is(err, ErrBadThreshold) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKnee(%q) = %v, want ErrBadThreshold containing %q", expr, err, want)
		}
	}
}

// TestCheckSweep gates a sweep of two drivers: one with a knee and a projection, one with no
// step within the SLO; absolute, ratio and capacity thresholds pass or fail as they should, and
// a driver without a knee fails with a note rather than passing.
func TestCheckSweep(t *testing.T) {
	sw := &results.Sweep{Mode: "rate", Drivers: []results.SweepDriver{
		{Driver: "lockcore", KneeStep: 3, KneeLoad: 40000, Knee: &results.KneeBracket{OKLoad: 40000, ProjectedServerCapacityPerS: 120000}},
		{Driver: "naive", KneeStep: 1, KneeLoad: 10000, Knee: &results.KneeBracket{OKLoad: 10000}},
		{Driver: "redsync"},
	}}
	parse := func(expr string) Threshold {
		th, err := ParseKnee(expr)
		if err != nil {
			t.Fatal(err)
		}
		return th
	}
	for _, tc := range []struct {
		expr  string
		pass  []bool // per outcome, in the sweep's driver order
		notes []string
	}{
		{"lockcore knee>=30000", []bool{true}, []string{""}},
		{"lockcore knee>=50000", []bool{false}, []string{""}},
		{"knee>=5000", []bool{true, true, false}, []string{"", "", "no knee"}},
		{"lockcore/naive knee>=3", []bool{true}, []string{""}},
		{"lockcore/naive knee>=5", []bool{false}, []string{""}},
		{"lockcore capacity>=100000", []bool{true}, []string{""}},
		{"naive capacity>=1", []bool{false}, []string{"no projected capacity"}},
		{"lockcore/etcd knee>=1", []bool{false}, []string{"etcd is not in the sweep"}},
	} {
		rs := CheckSweep([]Threshold{parse(tc.expr)}, sw)
		got := rs[0].Outcomes
		if len(got) != len(tc.pass) {
			t.Fatalf("%s: %d outcomes %+v, want %d", tc.expr, len(got), got, len(tc.pass))
		}
		for i, o := range got {
			if o.Pass != tc.pass[i] || !strings.Contains(o.Note, tc.notes[i]) {
				t.Errorf("%s: outcome %d = %+v, want pass %v and a note containing %q", tc.expr, i, o, tc.pass[i], tc.notes[i])
			}
		}
	}
	rs := CheckSweep([]Threshold{parse("lockcore knee>=30000"), parse("knee>=20000")}, sw)
	if Failed(rs) != 1 {
		t.Errorf("Failed = %d, want 1 (the second: naive and redsync below or without a knee)", Failed(rs))
	}
	var buf bytes.Buffer
	if err := WriteReport(&buf, rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ok    lockcore knee>=30000: lockcore 40000", "FAIL  knee>=20000: naive 10000", "FAIL  knee>=20000: redsync - (no knee"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, buf.String())
		}
	}
}
