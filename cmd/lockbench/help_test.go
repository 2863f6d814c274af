package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpTopicsMatchDocs: every topic's page exists and starts with the topic's title, and
// every page of docs/ but the contents has a topic, so the table and the manual cannot drift.
func TestHelpTopicsMatchDocs(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	named := map[string]bool{}
	seen := map[string]bool{}
	for _, tp := range helpTopics {
		if seen[tp.name] {
			t.Errorf("topic %q is in helpTopics twice", tp.name)
		}
		seen[tp.name] = true
		named[tp.file] = true
		b, err := os.ReadFile(filepath.Join(root, tp.file))
		if err != nil {
			t.Errorf("topic %q: %v", tp.name, err)
			continue
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if first != "# "+tp.title {
			t.Errorf("topic %q: %s starts with %q, want %q", tp.name, tp.file, first, "# "+tp.title)
		}
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		if rel == manualIndex {
			continue
		}
		if !named[rel] {
			t.Errorf("%s has no help topic: add it to helpTopics (cmd/lockbench/help.go) and to %s", rel, manualIndex)
		}
	}
	if _, err := os.Stat(filepath.Join(root, manualIndex)); err != nil {
		t.Error(err)
	}
}

// TestHelpTopic: `lockbench help` lists the topics, `help TOPIC` says where the page is,
// `help COMMAND` adds it to the command's flags, and an unknown topic is bad input.
func TestHelpTopic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args     []string
		code     int
		contains []string
	}{
		{[]string{"help"}, exitOK, []string{"lockbench run [flags]", "Manual topics", "open-loop", "safety", "docs/index.md"}},
		{[]string{"help", "net"}, exitOK, []string{"Network conditions: --net", "manual: docs/net.md"}},
		{[]string{"help", "safety"}, exitOK, []string{"manual: docs/safety.md"}},
		{[]string{"help", "run"}, exitOK, []string{"--concurrency", "manual: docs/run.md"}},
		{[]string{"help", "status"}, exitOK, []string{"manual: docs/up-down-status.md"}},
		{[]string{"--help", "sweep"}, exitOK, []string{"--slo", "manual: docs/sweep.md"}},
		{[]string{"help", "nosuch"}, exitUsage, []string{`lockbench help: unknown command or topic "nosuch"`, "topics are: run, sweep"}},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(tc.args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d\n%s", tc.args, code, tc.code, out)
		}
		for _, s := range tc.contains {
			if !strings.Contains(out, s) {
				t.Errorf("%q: output lacks %q:\n%s", tc.args, s, out)
			}
		}
	}
}
