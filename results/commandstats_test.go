package results

import (
	"fmt"
	"maps"
	"strings"
	"testing"
)

func TestParseCommandStats(t *testing.T) {
	tests := []struct {
		name, info string
		want       CommandStats
		wantErr    string
	}{
		{name: "empty", info: "", want: CommandStats{}},
		{
			name: "redis 7 with CRLF",
			info: "# Commandstats\r\n" +
				"cmdstat_evalsha:calls=10,usec=50,usec_per_call=5.00,rejected_calls=1,failed_calls=2\r\n" +
				"cmdstat_client|setinfo:calls=2,usec=3,usec_per_call=1.50,rejected_calls=0,failed_calls=0\r\n",
			want: CommandStats{
				"evalsha":        {Calls: 10, Usec: 50, RejectedCalls: 1, FailedCalls: 2},
				"client|setinfo": {Calls: 2, Usec: 3},
			},
		},
		{
			name: "redis 5 fields, other INFO lines, upper case",
			info: "redis_version:5.0.14\n\ncmdstat_GET:calls=3,usec=9,usec_per_call=3.00\nerrorstat_ERR:count=1\n",
			want: CommandStats{"get": {Calls: 3, Usec: 9}},
		},
		{name: "unknown field", info: "cmdstat_set:calls=1,usec=2,future=x", want: CommandStats{"set": {Calls: 1, Usec: 2}}},
		{name: "no colon", info: "cmdstat_get", wantErr: "want cmdstat_<name>"},
		{name: "no name", info: "cmdstat_:calls=1", wantErr: "want cmdstat_<name>"},
		{name: "field without value", info: "cmdstat_get:calls", wantErr: "not key=value"},
		{name: "bad number", info: "cmdstat_get:calls=1x", wantErr: "calls"},
		{name: "no calls", info: "# Commandstats\ncmdstat_get:usec=1", wantErr: "line 2"},
	}
	for _, tt := range tests {
		got, err := ParseCommandStats(tt.info)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want one mentioning %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("%s: got %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

func TestCommandStatsArithmetic(t *testing.T) {
	before := CommandStats{"evalsha": {Calls: 10, Usec: 100}, "get": {Calls: 5}, "info": {Calls: 1}}
	after := CommandStats{"evalsha": {Calls: 30, Usec: 250, FailedCalls: 1}, "get": {Calls: 5}, "hincrby": {Calls: 4}, "info": {Calls: 2}}

	delta := after.Sub(before)
	want := CommandStats{"evalsha": {Calls: 20, Usec: 150, FailedCalls: 1}, "hincrby": {Calls: 4}, "info": {Calls: 1}}
	if !maps.Equal(delta, want) {
		t.Errorf("Sub = %v, want %v", delta, want)
	}
	if got := delta.Total(); got != 25 {
		t.Errorf("Total() = %d, want 25", got)
	}
	if got := delta.Total("info"); got != 24 {
		t.Errorf(`Total("info") = %d, want 24`, got)
	}
	sum := before.Add(delta)
	if !maps.Equal(sum, after) {
		t.Errorf("before.Add(delta) = %v, want %v", sum, after)
	}
	if got := CommandStats(nil).Add(nil); got == nil || len(got) != 0 {
		t.Errorf("nil.Add(nil) = %#v, want empty map", got)
	}
}

func ExampleParseCommandStats() {
	before, _ := ParseCommandStats("# Commandstats\r\ncmdstat_evalsha:calls=10,usec=40,usec_per_call=4.00,rejected_calls=0,failed_calls=0\r\n")
	after, _ := ParseCommandStats("# Commandstats\r\n" +
		"cmdstat_evalsha:calls=110,usec=440,usec_per_call=4.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_hincrby:calls=100,usec=90,usec_per_call=0.90,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_info:calls=2,usec=80,usec_per_call=40.00,rejected_calls=0,failed_calls=0\r\n")
	delta := after.Sub(before)
	fmt.Println(delta["evalsha"].Calls, delta["hincrby"].Calls, delta.Total("info"))
	// Output: 100 100 200
}

func FuzzParseCommandStats(f *testing.F) {
	f.Add("# Commandstats\r\ncmdstat_get:calls=3,usec=9,usec_per_call=3.00,rejected_calls=0,failed_calls=0\r\n")
	f.Add("cmdstat_:")
	f.Fuzz(func(t *testing.T, info string) {
		stats, err := ParseCommandStats(info)
		if err == nil && stats == nil {
			t.Fatal("nil stats without an error")
		}
	})
}
