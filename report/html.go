package report

import (
	"bufio"
	"html/template"
	"io"
	"strconv"
)

// page is what the template fills in.
type page struct {
	Title   string
	Compare *compareView
	Notes   []string
	Summary *table
	Charts  []pageChart
	// Lead are the charts the page shows first, under a comparison's verdict and before any
	// table: the throughput bars of drivers × labels or topologies, the overview a reader
	// looks for first.
	Lead    []pageChart
	Sweeps  []*table
	Configs []pageConfig
}

type pageChart struct {
	ID, Title, Caption string
	SVG                template.HTML
}

type pageConfig struct {
	Name string
	Rows []row
}

// WriteHTML writes the report as one self-contained HTML page: the CSS inline, every chart
// an inline SVG, no script, and no reference to anything outside the page, so it renders the
// same offline, mailed or attached. It is not safe for concurrent use.
func (r *Report) WriteHTML(w io.Writer) error {
	pg := page{Title: r.Title, Compare: r.compare, Notes: r.Notes, Summary: r.summaryTable()}
	for _, c := range r.Charts {
		svg, err := c.inlineSVG()
		if err != nil {
			return err
		}
		// The SVG comes from gonum's writer, which escapes the text it draws.
		pc := pageChart{ID: c.ID, Title: c.Title, Caption: c.Caption, SVG: template.HTML(svg)}
		if c.ID == "bars-throughput" {
			pg.Lead = append(pg.Lead, pc)
			continue
		}
		pg.Charts = append(pg.Charts, pc)
	}
	for _, sv := range r.sweeps {
		pg.Sweeps = append(pg.Sweeps, sv.table())
	}
	for i, s := range r.sources {
		name := s.Name
		if name == "" {
			name = "result file " + strconv.Itoa(i+1)
		}
		pg.Configs = append(pg.Configs, pageConfig{Name: name, Rows: configRows(s)})
	}
	bw := bufio.NewWriter(w)
	if err := pageTemplate.Execute(bw, pg); err != nil {
		return err
	}
	return bw.Flush()
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", sans-serif; margin: 2em auto; max-width: 1180px; padding: 0 1em; color: #222; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
figure { margin: 1em 0 2em; }
figure svg { display: block; max-width: 100%; height: auto; }
/* The charts were laid out with Liberation Sans; these fonts share its metrics. */
figure svg text { font-family: "Liberation Sans", Arimo, Arial, Helvetica, sans-serif !important; }
figcaption { color: #555; font-size: 0.9em; margin-top: 0.4em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.summary td.num { white-space: nowrap; }
/* A table wider than the page scrolls by itself, not the page. */
.wide { overflow-x: auto; }
td:first-child { white-space: nowrap; }
caption { caption-side: bottom; text-align: left; color: #555; padding-top: 0.3em; }
.notes { background: #fff8e1; border-left: 4px solid #f0c040; padding: 0.5em 1em; }
nav a { margin-right: 1em; white-space: nowrap; display: inline-block; }
.verdict { font-size: 1.1em; font-weight: bold; padding: 0.4em 0.8em; display: inline-block; }
.verdict.fail { background: #fde2e1; color: #8a1c1c; }
.verdict.pass { background: #e3f4e1; color: #1d5b1a; }
.verdict.caveat { background: #fff4d6; color: #5c4300; }
td.v-regression, td.v-violations { background: #fde2e1; color: #8a1c1c; font-weight: bold; }
td.v-inconclusive { background: #fff4d6; }
td.v-improved { background: #e3f4e1; }
table.cmp td.num, table.cmp td:nth-child(2) { white-space: nowrap; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if or .Lead .Charts}}<nav>{{range .Lead}}<a href="#{{.ID}}">{{.Title}}</a> {{end}}{{range .Charts}}<a href="#{{.ID}}">{{.Title}}</a> {{end}}</nav>{{end}}
{{with .Compare}}<h2>BASE and NEW</h2>
<p class="verdict {{.Class}}">{{.Verdict}}</p>
{{with .Labels}}<p>{{.}}</p>{{end}}
{{end}}{{range .Lead}}{{template "chart" .}}{{end}}{{with .Compare}}<div class="wide"><table class="cmp">
<caption>{{.Caption}}</caption>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{$class := .Class}}{{range $i, $c := .Cells}}{{if eq $i 7}}<td class="{{$class}}">{{$c}}</td>{{else if lt $i 2}}<td>{{$c}}</td>{{else}}<td class="num">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</table></div>
{{end}}
{{if .Notes}}<div class="notes">{{range .Notes}}<p>{{.}}</p>{{end}}</div>{{end}}
{{with .Summary}}<h2>Summary</h2>
{{template "table" .}}{{end}}
{{range .Charts}}{{template "chart" .}}{{end}}
{{range .Sweeps}}<h2>Sweep steps</h2>
{{template "table" .}}{{end}}
{{range .Configs}}<h2>Configuration: {{.Name}}</h2>
<table>
{{range .Rows}}<tr><th>{{.Key}}</th><td>{{range $i, $l := .Lines}}{{if $i}}<br>{{end}}{{$l}}{{end}}</td></tr>
{{end}}</table>
{{end}}
</body>
</html>
{{define "chart"}}<h2 id="{{.ID}}">{{.Title}}</h2>
<figure>
{{.SVG}}
<figcaption>{{.Caption}} (Also {{.ID}}.png.)</figcaption>
</figure>
{{end}}{{define "table"}}<div class="wide"><table{{with .Class}} class="{{.}}"{{end}}>
{{with .Caption}}<caption>{{.}}</caption>{{end}}
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}{{if $i}}<td class="num">{{$c}}</td>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</table></div>
{{end}}`))
