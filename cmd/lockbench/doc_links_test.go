package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	docLink    = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	docHeading = regexp.MustCompile(`^#{1,6} +(.*)$`)
)

// docAnchors returns the anchors GitHub makes of a markdown file's headings: lower case,
// punctuation but - and _ dropped, spaces made -, a repeated one suffixed -1, -2, ….
func docAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	inBlock := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		m := docHeading.FindStringSubmatch(line)
		if inBlock || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && !strings.ContainsRune("—–·×→…’“”", r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for i := 1; anchors[a]; i++ {
			a = fmt.Sprintf("%s-%d", b.String(), i)
		}
		anchors[a] = true
	}
	return anchors
}

// TestDocLinksResolve: every relative link of README.md and docs/*.md (outside code blocks)
// names a file that exists, and a #anchor names a heading of that file.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	links := 0
	for _, doc := range docFiles(t) {
		name := doc.name
		// Code blocks are blanked, lines kept, so that a link's text may wrap over lines.
		lines := strings.Split(doc.text, "\n")
		inBlock := false
		for i, line := range lines {
			if strings.HasPrefix(line, "```") {
				inBlock = !inBlock
				lines[i] = ""
			} else if inBlock {
				lines[i] = ""
			}
		}
		text := strings.Join(lines, "\n")
		for _, m := range docLink.FindAllStringSubmatchIndex(text, -1) {
			target := text[m[2]:m[3]]
			line := 1 + strings.Count(text[:m[0]], "\n")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, anchor, _ := strings.Cut(target, "#")
			dest := doc.path
			if file != "" {
				dest = filepath.Join(filepath.Dir(doc.path), filepath.FromSlash(file))
			}
			page, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s:%d: link %s: %v", name, line, target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !docAnchors(string(page))[anchor] {
				t.Errorf("%s:%d: link %s: no heading with that anchor in %s", name, line, target, filepath.ToSlash(dest))
			}
		}
	}
	if links < 50 {
		t.Errorf("found %d relative links, want at least 50: is the extraction broken?", links)
	}
	t.Logf("%d relative links checked", links)
}

// TestDocAnchors: the anchors GitHub gives headings like ours.
func TestDocAnchors(t *testing.T) {
	got := docAnchors("# Capacity per Redis core: `--pin` and the projection\n## Faults during a run: `--fault`\n" +
		"## Why lockcore's hand-over is safe, and what stays yours\n```\n# not a heading\n```\n## Notes\n## Notes\n")
	for _, want := range []string{"capacity-per-redis-core---pin-and-the-projection", "faults-during-a-run---fault",
		"why-lockcores-hand-over-is-safe-and-what-stays-yours", "notes", "notes-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment in a code block made an anchor")
	}
}
