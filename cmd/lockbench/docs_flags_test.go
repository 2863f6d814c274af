package main

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench"
)

// The flag tables of the manual are checked against the flag sets: what `lockbench CMD --help`
// lists, which is pflag's own listing of the command's flag set (FlagUsages: every flag that is
// not hidden, with the default pflag prints). Reading the listing rather than the flag set keeps
// the check off the code that builds the sets, which moves between files and packages.
//
// A flag table is a markdown table whose header's first cell is "flag". Every `--name` in its
// first column must be a flag of the page's command (docFlagPages; a "## …" heading naming
// `sweep` or `worker` switches to that command for the tables under it); where the table has a
// "default" column whose cell is one code span, it must be what pflag prints. Every flag of
// the commands of docFlagComplete must be named in such a table of its page.

// docFlagPages maps each page with flag tables to the command its tables describe.
var docFlagPages = map[string]string{
	"docs/run.md":          cmdRun,
	"docs/sweep.md":        cmdSweep,
	"docs/worker-merge.md": cmdWorker,
	"docs/open-loop.md":    cmdRun,
	"docs/topologies.md":   cmdRun,
	"docs/compare.md":      "compare",
	"docs/report.md":       "report",
}

// docFlagComplete are the pages that list every flag of a command.
var docFlagComplete = []struct{ cmd, page string }{
	{cmdRun, "docs/run.md"}, {cmdSweep, "docs/run.md"}, {cmdWorker, "docs/run.md"},
	{"compare", "docs/compare.md"}, {"report", "docs/report.md"},
}

// helpFlag is one flag as --help lists it.
type helpFlag struct {
	def    string // the default pflag prints, unquoted; "" when it prints none (a zero value)
	hasDef bool
}

var (
	helpFlagLine = regexp.MustCompile(`^  (?:-[A-Za-z0-9], |    )--([a-z0-9][a-z0-9-]*)\b`)
	helpDefault  = regexp.MustCompile(`\(default (.*)\)\s*$`)
	docFlagName  = regexp.MustCompile(`(?:^|[\s(` + "`" + `])--([a-z0-9][a-z0-9-]*)`)
	docCodeCell  = regexp.MustCompile("^`([^`]*)`$")
	docTableRule = regexp.MustCompile(`^\|[-:| ]+\|$`)
)

// helpFlags returns the flags `lockbench cmd --help` lists, by name (without "--").
func helpFlags(t *testing.T, cmd string) map[string]helpFlag {
	t.Helper()
	var out, errb bytes.Buffer
	if code := dispatch([]string{cmd, "--help"}, &out, &errb); code != exitOK {
		t.Fatalf("lockbench %s --help: exit %d\n%s", cmd, code, errb.String())
	}
	_, listing, ok := strings.Cut(out.String(), "\nFlags:\n")
	if !ok {
		t.Fatalf("lockbench %s --help has no Flags: section:\n%s", cmd, out.String())
	}
	// The listing ends at the first empty line: pflag indents a usage's own line breaks.
	listing, _, _ = strings.Cut(listing, "\n\n")
	flags := map[string]helpFlag{}
	name := ""
	for _, line := range strings.Split(listing, "\n") {
		if m := helpFlagLine.FindStringSubmatch(line); m != nil {
			name = m[1]
			flags[name] = helpFlag{}
		}
		if name == "" {
			t.Fatalf("lockbench %s --help: %q before any flag", cmd, line)
		}
		// The default ends the flag's last line; a later line of the same flag replaces it.
		if m := helpDefault.FindStringSubmatch(line); m != nil {
			flags[name] = helpFlag{def: strings.Trim(m[1], `"[]`), hasDef: true}
		}
	}
	// run has about 80 flags, report 4; fewer than 3 means the listing was misread.
	if len(flags) < 3 {
		t.Fatalf("lockbench %s --help: %d flags read from\n%s", cmd, len(flags), listing)
	}
	return flags
}

// docFlagTable is one flag table of a page.
type docFlagTable struct {
	cmd  string // the command it describes
	line int    // of its header, 1-based
	rows []docFlagRow
}

// docFlagRow is one row: the flags its first cell names, and its default cell ("" when the
// table has no default column).
type docFlagRow struct {
	line  int
	flags []string
	def   string
}

// docFlagTables returns the flag tables of a page whose tables describe cmd.
func docFlagTables(text, cmd string) []docFlagTable {
	var tables []docFlagTable
	lines := strings.Split(text, "\n")
	current := cmd
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "## ") {
			current = cmd
			for _, c := range []string{cmdSweep, cmdWorker} {
				if strings.Contains(line, "`"+c) || strings.Contains(line, "lockbench "+c+"`") {
					current = c
				}
			}
			continue
		}
		cells := tableCells(line)
		if len(cells) == 0 || cells[0] != "flag" || i+1 >= len(lines) || !docTableRule.MatchString(strings.TrimSpace(lines[i+1])) {
			continue
		}
		defCol := slices.Index(cells, "default")
		tb := docFlagTable{cmd: current, line: i + 1}
		for i += 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
			row := tableCells(strings.TrimSpace(lines[i]))
			r := docFlagRow{line: i + 1}
			for _, m := range docFlagName.FindAllStringSubmatch(row[0], -1) {
				r.flags = append(r.flags, m[1])
			}
			if defCol > 0 && defCol < len(row) {
				r.def = row[defCol]
			}
			tb.rows = append(tb.rows, r)
		}
		i--
		tables = append(tables, tb)
	}
	return tables
}

// tableCells splits a markdown table line into its trimmed cells; nil for a line that is not
// a table row. A "|" escaped as "\|" or inside a code span stays in its cell.
func tableCells(line string) []string {
	if !strings.HasPrefix(line, "|") {
		return nil
	}
	var cells []string
	var cur strings.Builder
	code := false
	for i := 1; i < len(line); i++ {
		switch c := line[i]; {
		case c == '`':
			code = !code
			cur.WriteByte(c)
		case c == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '|' && !code:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return cells
}

// docDefaultMatches reports whether a default cell agrees with what pflag prints: a cell of one
// code span must be the default; prose ("driver default", "none", "from --pin") is not checked.
func docDefaultMatches(cell string, f helpFlag) bool {
	m := docCodeCell.FindStringSubmatch(cell)
	if m == nil {
		return true
	}
	doc := strings.Trim(m[1], `"`)
	if !f.hasDef {
		return slices.Contains([]string{"", "0", "0s", "false", "none", "off"}, doc)
	}
	return doc == f.def
}

// TestDocFlagTables checks every flag table of the manual against the flag sets, both ways.
func TestDocFlagTables(t *testing.T) {
	t.Parallel()
	sets := map[string]map[string]helpFlag{}
	set := func(cmd string) map[string]helpFlag {
		if sets[cmd] == nil {
			sets[cmd] = helpFlags(t, cmd)
		}
		return sets[cmd]
	}
	documented := map[string]map[string]bool{} // page → command → flags named
	checked := 0
	for _, doc := range docFiles(t) {
		cmd, ok := docFlagPages[doc.name]
		tables := docFlagTables(doc.text, cmd)
		if !ok {
			if len(tables) > 0 {
				t.Errorf("%s:%d: a flag table on a page docFlagPages does not map to a command: add it there", doc.name, tables[0].line)
			}
			continue
		}
		if len(tables) == 0 {
			t.Errorf("%s: no flag table found (header | flag | …): is the extraction broken?", doc.name)
		}
		for _, tb := range tables {
			flags := set(tb.cmd)
			for _, r := range tb.rows {
				for _, name := range r.flags {
					checked++
					f, ok := flags[name]
					switch {
					case !ok:
						t.Errorf("%s:%d: --%s is not a flag of lockbench %s", doc.name, r.line, name, tb.cmd)
					case len(r.flags) == 1 && !docDefaultMatches(r.def, f):
						t.Errorf("%s:%d: --%s: the table's default is %s, lockbench %s --help says %q", doc.name, r.line, name, r.def, tb.cmd, f.def)
					}
					if documented[doc.name] == nil {
						documented[doc.name] = map[string]bool{}
					}
					documented[doc.name][tb.cmd+" "+name] = true
				}
			}
		}
	}
	for _, c := range docFlagComplete {
		var missing []string
		for name := range set(c.cmd) {
			// help is every command's; sweep's and worker's tables in run.md list only what
			// run lacks, so run's flags count for them.
			if name == "help" || documented[c.page][c.cmd+" "+name] || (c.page == "docs/run.md" && documented[c.page][cmdRun+" "+name]) {
				continue
			}
			missing = append(missing, "--"+name)
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			t.Errorf("%s does not list %d flags of lockbench %s: %s", c.page, len(missing), c.cmd, strings.Join(missing, " "))
		}
	}
	// About 130 names on 2026-11-27; far fewer means the extraction broke.
	if checked < 100 {
		t.Errorf("checked %d documented flags, want at least 100: is the extraction broken?", checked)
	}
	t.Logf("%d documented flags checked", checked)
}

// TestDocFlagExtraction pins the readers on samples: the --help listing's shape (pflag's) and
// a page's tables.
func TestDocFlagExtraction(t *testing.T) {
	t.Parallel()
	md := "## `lockbench run`\n\n| flag | default | meaning |\n|---|---|---|\n" +
		"| `--out` | `lockbench-results` | x |\n| `--user`, `--password-file` | none | a \\| b |\n" +
		"| `--rate-from A --rate-to B` | | c |\n\ntext `--not-a-row`\n\n## Flags of `sweep`\n\n| flag | meaning |\n|---|---|\n| `--slo PCT=D` | d |\n"
	var got []string
	for _, tb := range docFlagTables(md, cmdRun) {
		for _, r := range tb.rows {
			got = append(got, fmt.Sprintf("%s:%d %s [%s]", tb.cmd, r.line, strings.Join(r.flags, ","), r.def))
		}
	}
	want := []string{"run:5 out [`lockbench-results`]", "run:6 user,password-file [none]", "run:7 rate-from,rate-to []", "sweep:15 slo []"}
	if !slices.Equal(got, want) {
		t.Errorf("tables read as\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}

	run := helpFlags(t, cmdRun)
	for name, want := range map[string]helpFlag{
		"out": {def: "lockbench-results", hasDef: true}, "concurrency": {def: "64", hasDef: true},
		"driver": {def: "naive,lockcore", hasDef: true}, "hold": {}, "help": {},
	} {
		if got, ok := run[name]; !ok || got != want {
			t.Errorf("run --help: --%s read as %+v (listed %v), want %+v", name, got, ok, want)
		}
	}
	for _, hidden := range []string{"fleet-net", "check-arena", "metrics-run-id"} {
		if _, ok := run[hidden]; ok {
			t.Errorf("run --help: hidden flag --%s read as listed", hidden)
		}
	}
	if !docDefaultMatches("`0s`", helpFlag{}) || docDefaultMatches("`results`", run["out"]) || !docDefaultMatches("driver default", run["lease"]) {
		t.Error("docDefaultMatches: want a zero default to match `0s`, `results` not to match --out's, prose to pass")
	}
}

// TestOutDefault: run's, sweep's and the worker's --out default is bench.DefaultOut, the
// directory that is not a Go package (bench's TestDefaultOutIsNotSource).
func TestOutDefault(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{cmdRun, cmdSweep, cmdWorker} {
		if f := helpFlags(t, cmd)["out"]; f.def != bench.DefaultOut {
			t.Errorf("lockbench %s --out defaults to %q, want %q", cmd, f.def, bench.DefaultOut)
		}
	}
}
