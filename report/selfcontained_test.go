package report

import (
	"regexp"
	"strings"
	"testing"
)

var (
	// attrRef and cssURL find the values a browser would load: src, href and the like, and
	// CSS url(); they may only point inside the page (#anchor) or carry their data (data:).
	attrRef = regexp.MustCompile(`(?i)\b(?:src|href|xlink:href|action|poster|srcset)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)`)
	cssURL  = regexp.MustCompile(`(?i)url\(\s*("[^"]*"|'[^']*'|[^)]*)\)`)
	// loader finds what fetches whatever it names: URL schemes anywhere (the page has no
	// reason to name one), @import, and the elements that load things.
	loader = regexp.MustCompile(`(?i)(?:https?|ftp|file):|@import|<(?:script|link|iframe|object|embed|base)\b`)
)

// externalRefs returns whatever in page would make a browser fetch something.
func externalRefs(page string) []string {
	var out []string
	internal := func(v string) bool {
		v = strings.ToLower(strings.TrimSpace(strings.Trim(v, `"'`)))
		return strings.HasPrefix(v, "#") || strings.HasPrefix(v, "data:")
	}
	for _, m := range attrRef.FindAllStringSubmatch(page, -1) {
		if !internal(m[1]) {
			out = append(out, m[0])
		}
	}
	for _, m := range cssURL.FindAllStringSubmatch(page, -1) {
		if !internal(m[1]) {
			out = append(out, m[0])
		}
	}
	return append(out, loader.FindAllString(page, -1)...)
}

// TestExternalRefsCatchesReferences makes sure the check that the page is self-contained
// catches what it is meant to, so that its passing means something.
func TestExternalRefsCatchesReferences(t *testing.T) {
	bad := []string{
		`<img src="http://example.com/a.png">`,
		`<img src="//cdn.example.com/a.png">`,
		`<img src=chart.png>`,
		`<a href="other.html">`,
		`<script>fetch(x)</script>`,
		`<link rel="stylesheet" href="s.css">`,
		`<style>@import "x.css";</style>`,
		`<style>body { background: url(bg.png) }</style>`,
		`<style>body { background: url("//x/bg.png") }</style>`,
		`<use xlink:href="defs.svg#a"/>`,
		`<a href="HTTPS://example.com">`,
		`<svg xmlns="http://www.w3.org/2000/svg">`,
	}
	for _, page := range bad {
		if refs := externalRefs(page); len(refs) == 0 {
			t.Errorf("%s: not caught", page)
		}
	}
	good := []string{
		`<a href="#spectrum">spectrum</a>`,
		`<img src="data:image/png;base64,iVBORw0KGgo=">`,
		`<style>@font-face { src: url(data:font/ttf;base64,AAAA) }</style>`,
		`<p>p99 &lt; 2ms; 1/(1-q)</p>`,
	}
	for _, page := range good {
		if refs := externalRefs(page); len(refs) > 0 {
			t.Errorf("%s: flagged %q, but it refers to nothing outside the page", page, refs)
		}
	}
}
