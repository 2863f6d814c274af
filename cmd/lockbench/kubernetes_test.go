package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// k8sJob is the part of a Kubernetes Job the test checks.
type k8sJob struct {
	Kind string `yaml:"kind"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				Containers []struct {
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
					Env     []struct {
						Name      string `yaml:"name"`
						Value     string `yaml:"value"`
						ValueFrom *struct {
							FieldRef struct {
								FieldPath string `yaml:"fieldPath"`
							} `yaml:"fieldRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					VolumeMounts []struct {
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

var k8sVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// TestKubernetesJobRunsAWorker parses the example Indexed Job and runs its pods' command lines,
// with Kubernetes' $(VAR) expansion done as the kubelet does, through the worker's real flag
// parser, for every index.
func TestKubernetesJobRunsAWorker(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "kubernetes", "lockbench-job.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var job *k8sJob
	for {
		var doc k8sJob
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if doc.Kind == "Job" {
			job = &doc
		}
	}
	if job == nil {
		t.Fatalf("%s has no Job", path)
	}
	if job.Spec.CompletionMode != "Indexed" || job.Spec.Completions < 2 || job.Spec.Parallelism != job.Spec.Completions {
		t.Fatalf("job spec %+v: want an Indexed Job whose pods all run at once", job.Spec)
	}
	cs := job.Spec.Template.Spec.Containers
	if len(cs) != 1 || len(cs[0].Command) != 1 || cs[0].Command[0] != "lockbench" || len(cs[0].Args) == 0 || cs[0].Args[0] != cmdWorker {
		t.Fatalf("container %+v: want one container running 'lockbench worker'", cs)
	}
	c := cs[0]
	startAt := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for index := range job.Spec.Completions {
		env := map[string]string{}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-completion-index"):
				env[e.Name] = strconv.Itoa(index)
			case e.Value == "__START_AT__":
				env[e.Name] = startAt.Format(time.RFC3339) // what the README's sed puts there
			default:
				env[e.Name] = e.Value
			}
		}
		var args []string
		for _, a := range c.Args[1:] {
			args = append(args, k8sVar.ReplaceAllStringFunc(a, func(m string) string {
				v, ok := env[k8sVar.FindStringSubmatch(m)[1]]
				if !ok {
					t.Errorf("argument %q uses a variable the container does not define", a)
				}
				return v
			}))
		}
		var out bytes.Buffer
		f, code, ok := parseRunFlagsAs(cmdWorker, args, &out, &out)
		if !ok {
			t.Fatalf("index %d: lockbench worker refuses %q: exit %d: %s", index, args, code, out.String())
		}
		ff := f.fleet
		if ff.index != index || ff.procs != job.Spec.Completions || !ff.startAt.Equal(startAt) {
			t.Errorf("index %d: worker index %d procs %d start %v; want the pod's index, completions %d, START_AT", index, ff.index, ff.procs, ff.startAt, job.Spec.Completions)
		}
		if len(c.VolumeMounts) == 0 || !strings.HasPrefix(ff.output, c.VolumeMounts[0].MountPath+"/") || !strings.Contains(ff.output, strconv.Itoa(index)) {
			t.Errorf("index %d: output %q: want a file named by the index on the mounted volume", index, ff.output)
		}
	}
}
