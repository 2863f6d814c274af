package main

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// The documented result fields are checked against the JSON tags of results.File, walked by
// reflection, rather than against the file of a short run: a run writes only the fields it has
// (omitempty), and the documentation describes fields that only open loops, fenced drivers,
// faults, sweeps or multi-node topologies write. The tags are what encoding/json writes, so a
// renamed or removed field breaks this check as it breaks readers of the files.
//
// What is checked, in README.md and docs/*.md:
//   - every ```json block that holds "schema" (a whole result file, paths from the top) or that
//     starts with a "key": (a fragment: its paths may sit anywhere in the file): every key at
//     its place, keys of maps (errors_by_kind, redis_commands_by_name, …) aside;
//   - every markdown table whose first column is headed "field": each `name` in that column, a
//     field anywhere in the file, or a dotted path (histograms.service) ending a path of it.

// schemaPaths returns every path of JSON keys a results.File can have, dot separated; "*"
// stands for the keys of a map.
func schemaPaths() map[string]bool {
	paths := map[string]bool{}
	var walk func(t reflect.Type, prefix string, seen []reflect.Type)
	walk = func(t reflect.Type, prefix string, seen []reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		switch {
		case t.Kind() == reflect.Map:
			paths[prefix+"*"] = true
			walk(t.Elem(), prefix+"*.", seen)
			return
		case t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() || slices.Contains(seen, t):
			return
		}
		seen = append(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				walk(f.Type, prefix, seen)
				continue
			}
			if name == "" {
				name = f.Name
			}
			paths[prefix+name] = true
			walk(f.Type, prefix+name+".", seen)
		}
	}
	walk(reflect.TypeFor[results.File](), "", nil)
	return paths
}

// schemaHas reports whether path (dot separated) is a path of the schema: from the top, or, for
// a fragment, ending any path. A "*" of the schema matches any key.
func schemaHas(paths map[string]bool, path string, fragment bool) bool {
	want := strings.Split(path, ".")
	for p := range paths {
		have := strings.Split(p, ".")
		if len(have) < len(want) || (!fragment && len(have) != len(want)) {
			continue
		}
		tail := have[len(have)-len(want):]
		if tail[0] == "*" {
			continue // a map's key names nothing of the schema on its own
		}
		match := true
		for i := range want {
			if tail[i] != want[i] && tail[i] != "*" {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

var (
	docJSONToken = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*(:)?|[{}\[\]]`)
	docFieldCell = regexp.MustCompile("`([^`]+)`")
)

// jsonKeyPaths returns the key paths of a JSON sample, tolerating elisions ("…") and a
// fragment's missing braces: only strings followed by a colon, and brackets, count. Each
// path comes with the line of the sample it is on (0-based).
func jsonKeyPaths(sample string) (paths []string, lines []int) {
	type frame struct {
		key    string // the key whose value this is, "" inside an array
		object bool
	}
	var stack []frame
	pending := "" // a key whose value has not started yet
	for ln, line := range strings.Split(sample, "\n") {
		for _, m := range docJSONToken.FindAllStringSubmatch(line, -1) {
			switch tok := m[0]; {
			case tok == "{" || tok == "[":
				stack = append(stack, frame{key: pending, object: tok == "{"})
				pending = ""
			case tok == "}" || tok == "]":
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			case m[2] == ":":
				var keys []string
				for _, f := range stack {
					if f.key != "" {
						keys = append(keys, f.key)
					}
				}
				paths = append(paths, strings.Join(append(keys, m[1]), "."))
				lines = append(lines, ln)
				pending = m[1]
			default:
				pending = "" // a string value
			}
		}
	}
	return paths, lines
}

// TestDocumentedResultFieldsExist checks the result fields the documentation shows or names
// against the result file's schema.
func TestDocumentedResultFieldsExist(t *testing.T) {
	schema := schemaPaths()
	checked := 0
	for _, doc := range docFiles(t) {
		name := doc.name
		lines := strings.Split(doc.text, "\n")
		for i := 0; i < len(lines); i++ {
			trimmed := strings.TrimSpace(lines[i])
			switch {
			case trimmed == "```json":
				start := i + 1
				for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				}
				sample := strings.Join(lines[start:min(i, len(lines))], "\n")
				first := strings.TrimSpace(sample)
				fragment := strings.HasPrefix(first, `"`)
				if !fragment && !strings.Contains(sample, `"schema"`) {
					continue // JSON, but not a result file
				}
				keys, at := jsonKeyPaths(sample)
				for k, key := range keys {
					checked++
					if !schemaHas(schema, key, fragment) {
						t.Errorf("%s:%d: result field %q is not in results.File's JSON", name, start+at[k]+1, key)
					}
				}
			case strings.HasPrefix(trimmed, "|") && strings.Trim(strings.Split(trimmed, "|")[1], " ") == "field":
				for i += 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
					cell := strings.Split(strings.TrimSpace(lines[i]), "|")[1]
					for _, m := range docFieldCell.FindAllStringSubmatch(cell, -1) {
						checked++
						if !schemaHas(schema, m[1], true) {
							t.Errorf("%s:%d: documented result field %q is not in results.File's JSON", name, i+1, m[1])
						}
					}
				}
			}
		}
	}
	// README's samples and table held about 220 keys on 2026-11-25; far fewer means the
	// extraction broke.
	if checked < 100 {
		t.Errorf("checked %d documented result fields, want at least 100: is the extraction broken?", checked)
	}
	t.Logf("%d documented result fields checked", checked)
}

// TestJSONKeyPaths pins the sample reader: nesting, arrays, elisions and fragments.
func TestJSONKeyPaths(t *testing.T) {
	t.Parallel()
	sample := `      "faults": [
        {"spec": "kill:master@3s", "at_s": 3},
        …
      ],
      "redis_commands_by_name": {"del": 1},
      "histograms": {"acquire": "HISTF…"}`
	got, _ := jsonKeyPaths(sample)
	want := []string{"faults", "faults.spec", "faults.at_s", "redis_commands_by_name", "redis_commands_by_name.del", "histograms", "histograms.acquire"}
	if !slices.Equal(got, want) {
		t.Errorf("paths %q, want %q", got, want)
	}
	schema := schemaPaths()
	for _, tc := range []struct {
		path     string
		fragment bool
		ok       bool
	}{
		{"runs.acquire_latency_us.p99", false, true},
		{"acquire_latency_us.p99", false, false}, // a whole file starts at the top
		{"acquire_latency_us.p99", true, true},
		{"runs.redis_commands_by_name.evalsha", false, true},
		{"histograms.service", true, true},
		{"runs.acquire_latency_us.p98", false, false},
		{"throughput", true, false},
	} {
		if got := schemaHas(schema, tc.path, tc.fragment); got != tc.ok {
			t.Errorf("schemaHas(%q, fragment %v) = %v, want %v", tc.path, tc.fragment, got, tc.ok)
		}
	}
}

// TestResultBlocksDocumented checks the other way for the blocks named here: every field of the
// block is named, in docs/*.md or README.md, as `block.field` (a "field" table's cell). A field
// added to one of them without a word fails this; a JSON sample alone does not count, since
// its keys (errors, kind) are too common to tell one block's from another's.
func TestResultBlocksDocumented(t *testing.T) {
	t.Parallel()
	var docs strings.Builder
	for _, doc := range docFiles(t) {
		docs.WriteString(doc.text)
	}
	text := docs.String()
	for _, path := range []string{"runs.resource", "cleanup"} {
		block := path[strings.LastIndex(path, ".")+1:]
		n := 0
		for p := range schemaPaths() {
			field, ok := strings.CutPrefix(p, path+".")
			if !ok || strings.Contains(field, "*") {
				continue // a map's keys (cleanup.by_pattern.*) are not fields
			}
			n++
			if !strings.Contains(text, "`"+block+"."+field+"`") {
				t.Errorf("result field %s.%s is documented nowhere", path, field)
			}
		}
		if n == 0 {
			t.Errorf("results.File has no block %q", path)
		}
	}
}
