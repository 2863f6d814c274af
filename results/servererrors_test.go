package results

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseErrorStatsAndConnections(t *testing.T) {
	got, err := ParseErrorStats("# Errorstats\r\nerrorstat_ERR:count=2\r\nerrorstat_NOPERM:count=32\r\n")
	if err != nil || !reflect.DeepEqual(got, map[string]int64{"ERR": 2, "NOPERM": 32}) {
		t.Errorf("ParseErrorStats = %v, %v", got, err)
	}
	if _, err := ParseErrorStats("errorstat_ERR:count=x\r\n"); err == nil {
		t.Error("a bad count was accepted")
	}
	rej, rec, err := ParseConnectionStats("# Stats\r\ntotal_connections_received:9\r\nrejected_connections:103\r\n")
	if err != nil || rej != 103 || rec != 9 {
		t.Errorf("ParseConnectionStats = %d, %d, %v", rej, rec, err)
	}
}

// The delta over a phase leaves out what did not grow, counts a reset counter from zero, and only
// unexpected replies or rejected connections are refusals.
func TestServerErrorsDelta(t *testing.T) {
	before := ServerStats{{Addr: "a", ErrorReplies: map[string]int64{"NOSCRIPT": 1, "NOPERM": 5}, RejectedConnections: 7}}
	after := ServerStats{{Addr: "a", ErrorReplies: map[string]int64{"NOSCRIPT": 3, "NOPERM": 5, "ERR": 4}, RejectedConnections: 2}}
	var r Run
	r.SetServerStats(after.Sub(before))
	se := r.ServerErrors
	if se == nil || !reflect.DeepEqual(se.Replies, map[string]int64{"NOSCRIPT": 2, "ERR": 4}) || se.RejectedConnections != 2 {
		t.Fatalf("server errors %+v", se)
	}
	if se.Unexpected() != nil || !se.Refused() {
		t.Errorf("unexpected %v, refused %v: NOSCRIPT and ERR are expected, the rejected connections are not", se.Unexpected(), se.Refused())
	}
	if s := se.String(); !strings.Contains(s, "rejected_connections 2") || !strings.Contains(s, "max number of clients reached") {
		t.Errorf("String() = %q", s)
	}
	after[0].ErrorReplies["NOPERM"] = 6
	after[0].RejectedConnections = 7
	r.SetServerStats(after.Sub(before))
	if u := r.ServerErrors.Unexpected(); !reflect.DeepEqual(u, map[string]int64{"NOPERM": 1}) {
		t.Errorf("unexpected %v, want NOPERM 1", u)
	}
	r.SetServerStats(before.Sub(before))
	if r.ServerErrors != nil {
		t.Errorf("no change gave %+v", r.ServerErrors)
	}
}

// Each kind keeps its first MaxErrorSamples distinct messages, through Merge and Fill.
func TestErrorSamples(t *testing.T) {
	a, b := NewRecorder(), NewRecorder()
	for i := range 5 {
		a.ErrorWith("acquire", fmt.Errorf("ERR max number of clients reached"))
		b.ErrorWith("acquire", fmt.Errorf("refusal %d", i))
	}
	b.ErrorWith("timeout", errors.New("i/o timeout"))
	b.ErrorWith("timeout", nil)
	var r Run
	if err := r.Fill(Merge(a, b), 1); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"acquire": {"ERR max number of clients reached", "refusal 0", "refusal 1"},
		"timeout": {"i/o timeout"},
	}
	if !reflect.DeepEqual(r.ErrorSamples, want) || r.ErrorsByKind["acquire"] != 10 || r.ErrorsByKind["timeout"] != 2 {
		t.Errorf("samples %q, errors %v", r.ErrorSamples, r.ErrorsByKind)
	}
	r.AddError("subscribe", 3, "NOPERM secret")
	r.RedactSamples(func(s string) string { return strings.ReplaceAll(s, "secret", "***") })
	if r.Errors != 15 || r.ErrorSamples["subscribe"][0] != "NOPERM ***" {
		t.Errorf("after AddError: errors %d, samples %q", r.Errors, r.ErrorSamples)
	}
}

func TestWriteFailed(t *testing.T) {
	var buf strings.Builder
	if err := WriteFailed(&buf, []Run{{Driver: "naive"}}); err != nil || buf.Len() != 0 {
		t.Fatalf("a healthy run wrote %q, %v", buf.String(), err)
	}
	runs := []Run{{Driver: "redislock", ErrorsByKind: map[string]int64{"acquire": 738},
		ErrorSamples: map[string][]string{"acquire": {"ERR max number of clients reached"}},
		Failed:       []string{"STALL: 127.0.0.1:6379 did not answer for 2.0s"}}}
	if err := WriteFailed(&buf, runs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"redislock: STALL: 127.0.0.1:6379", "redislock: 738 acquire errors, e.g. ERR max number of clients reached"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}
}
