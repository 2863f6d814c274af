package compose

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		bad  string // part of the error, if the text is refused
	}{
		{in: "single", want: Spec{Kind: KindSingle}},
		{in: "sentinel", want: Spec{Kind: KindSentinel}},
		{in: "cluster", want: Spec{Kind: KindCluster}},
		{in: "masters:1", want: Spec{Kind: KindMasters, Masters: 1}},
		{in: "masters:5", want: Spec{Kind: KindMasters, Masters: 5}},
		{in: "masters:16", want: Spec{Kind: KindMasters, Masters: MaxMasters}},

		{in: "", bad: "want single, sentinel, cluster or masters:N"},
		{in: "Single", bad: "want single"},
		{in: " single", bad: "want single"},
		{in: "masters", bad: "want single"},
		{in: "cluster:3", bad: "want single"},
		{in: "masters:", bad: "N from 1 to 16"},
		{in: "masters:0", bad: "N from 1 to 16"},
		{in: "masters:-1", bad: "N from 1 to 16"},
		{in: "masters:17", bad: "N from 1 to 16"},
		{in: "masters:x", bad: "N from 1 to 16"},
		{in: "masters:5 ", bad: "N from 1 to 16"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpec(tt.in)
			if tt.bad != "" {
				if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tt.bad) || !strings.Contains(err.Error(), `"`+tt.in+`"`) {
					t.Errorf("ParseSpec(%q) = %+v, %v; want ErrBadSpec quoting the input and saying %q", tt.in, got, err, tt.bad)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSpec(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

// Start refuses a hand-built Spec that ParseSpec would not produce, before starting anything.
func TestStartBadSpec(t *testing.T) {
	for _, spec := range []Spec{
		{},
		{Kind: "ring"},
		{Kind: KindMasters},
		{Kind: KindMasters, Masters: MaxMasters + 1},
		{Kind: KindSentinel, MasterName: "two words"},
	} {
		top, err := Start(context.Background(), spec, NativeOptions{Binary: "/nonexistent/redis-server"})
		if !errors.Is(err, ErrBadSpec) || top != nil {
			t.Errorf("Start(%+v) = %v, %v; want nil, ErrBadSpec", spec, top, err)
		}
	}
}

// A failed Start returns a nil Topology, not an interface holding a nil pointer.
func TestStartFailsWithNilTopology(t *testing.T) {
	for _, spec := range []Spec{
		{Kind: KindSingle}, {Kind: KindSentinel}, {Kind: KindCluster}, {Kind: KindMasters, Masters: 2},
	} {
		top, err := Start(context.Background(), spec, NativeOptions{Binary: "/nonexistent/redis-server"})
		if !errors.Is(err, ErrRedisServerNotFound) {
			t.Errorf("Start(%s) err = %v, want ErrRedisServerNotFound", spec, err)
		}
		if top != nil {
			t.Errorf("Start(%s) returned %#v with its error, want nil", spec, top)
		}
	}
}
