package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/generators"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// k8sTypes are the kinds our manifests may hold, by apiVersion and kind, each decoded into its
// Kubernetes API type.
var k8sTypes = map[string]func() any{
	"batch/v1 Job":             func() any { return new(batchv1.Job) },
	"v1 ConfigMap":             func() any { return new(corev1.ConfigMap) },
	"v1 Secret":                func() any { return new(corev1.Secret) },
	"v1 Service":               func() any { return new(corev1.Service) },
	"v1 PersistentVolumeClaim": func() any { return new(corev1.PersistentVolumeClaim) },
	"v1 Pod":                   func() any { return new(corev1.Pod) },
	"v1 ServiceAccount":        func() any { return new(corev1.ServiceAccount) },
	"v1 Namespace":             func() any { return new(corev1.Namespace) },
	"batch/v1 CronJob":         func() any { return new(batchv1.CronJob) },
}

var yamlDocSep = regexp.MustCompile(`(?m)^---\s*$`)

// decodeK8s decodes every document of a manifest into its Kubernetes API type, strictly: a
// field the type does not have (a misspelling, a field at the wrong level) or a duplicate
// field is an error, as kubectl apply --validate=strict would make it.
func decodeK8s(data []byte) ([]any, error) {
	var objs []any
	for i, doc := range yamlDocSep.Split(string(data), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		newObj := k8sTypes[tm.APIVersion+" "+tm.Kind]
		if newObj == nil {
			return nil, fmt.Errorf("document %d: apiVersion %q kind %q: not a kind this test knows", i, tm.APIVersion, tm.Kind)
		}
		obj := newObj()
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, tm.Kind, err)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// k8sManifests returns the paths of every manifest under deploy/kubernetes.
func k8sManifests(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, ext := range []string{"*.yaml", "*.yml"} {
		p, err := filepath.Glob(filepath.Join("..", "..", "deploy", "kubernetes", ext))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p...)
	}
	if len(paths) == 0 {
		t.Fatal("no manifest under deploy/kubernetes")
	}
	return paths
}

// Every manifest decodes into the Kubernetes API types in strict mode.
func TestKubernetesManifestsStrict(t *testing.T) {
	t.Parallel()
	for _, path := range k8sManifests(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeK8s(data)
		if err != nil {
			t.Errorf("%s: %v", path, err)
		} else if len(objs) == 0 {
			t.Errorf("%s holds no object", path)
		}
	}
}

// The strict decoding catches a misspelt field, a field at the wrong level, and a duplicate
// one: each edit of the real Job must fail, naming the field.
func TestKubernetesStrictDecodingCatchesMistakes(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubernetes", "lockbench-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	edits := []struct{ old, new, field string }{
		{"  completionMode: Indexed", "  completionMod: Indexed", "completionMod"},
		{"      restartPolicy: Never", "      restartPolicy: Never\n      backofLimit: 0", "backofLimit"},
		{"          imagePullPolicy: IfNotPresent", "          imagePullPolicy: IfNotPresent\n          imagePullPolicy: Always", "imagePullPolicy"},
	}
	for _, e := range edits {
		if !bytes.Contains(data, []byte(e.old)) {
			t.Fatalf("the Job no longer contains %q: update this test", e.old)
		}
		_, err := decodeK8s(bytes.Replace(data, []byte(e.old), []byte(e.new), 1))
		if err == nil || !strings.Contains(err.Error(), e.field) {
			t.Errorf("with %q: error %v; want one naming %s", e.new, err, e.field)
		}
	}
}

var k8sVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// TestKubernetesJobRunsAWorker checks the Indexed Job the README describes: it runs the
// lockbench image as its non-root user, needs no volume shared between nodes, and each pod's
// command line, with Kubernetes' $(VAR) expansion done as the kubelet does, passes the worker's
// real flag parser for every index, with the pod's index, the common start read by Redis's
// clock, and the results handed back through --collect under the run's id.
func TestKubernetesJobRunsAWorker(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "deploy", "kubernetes", "lockbench-job.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeK8s(data)
	if err != nil {
		t.Fatal(err)
	}
	var job *batchv1.Job
	for _, o := range objs {
		switch o := o.(type) {
		case *batchv1.Job:
			job = o
		case *corev1.PersistentVolumeClaim:
			t.Errorf("%s has a PersistentVolumeClaim %s: results go through --collect, not a volume", path, o.Name)
		}
	}
	if job == nil {
		t.Fatalf("%s has no Job", path)
	}
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || spec.Completions == nil || *spec.Completions < 2 ||
		spec.Parallelism == nil || *spec.Parallelism != *spec.Completions || spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Fatalf("job spec: want an Indexed Job of 2 or more pods that all run at once, never retried")
	}
	pod := spec.Template.Spec
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil || v.NFS != nil {
			t.Errorf("volume %s is shared storage: results go through --collect", v.Name)
		}
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != generators.UID {
		t.Errorf("pod security context %+v: want runAsNonRoot and the image's user %d", pod.SecurityContext, generators.UID)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers: want one", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != generators.LocalImage || len(c.Command) != 0 || len(c.Args) == 0 || c.Args[0] != cmdWorker {
		t.Fatalf("container: image %q command %q args %q; want %s running its entrypoint with 'worker'", c.Image, c.Command, c.Args, generators.LocalImage)
	}
	completions := int(*spec.Completions)
	startAt := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for index := range completions {
		env := map[string]string{}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-completion-index"):
				env[e.Name] = strconv.Itoa(index)
			case e.Value == "__START_AT__":
				env[e.Name] = startAt.Format(time.RFC3339) // what the header's sed puts there
			case e.Value == "__RUN_ID__":
				env[e.Name] = "20261123T115800Z"
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
		_, f, code, ok := parseWorker(args, &out, &out)
		if !ok {
			t.Fatalf("index %d: lockbench worker refuses %q: exit %d: %s", index, args, code, out.String())
		}
		ff := f.fleet
		if ff.Index != index || ff.Procs != completions || !ff.StartAt.Equal(startAt) || ff.Clock != bench.ClockRedis {
			t.Errorf("index %d: worker index %d procs %d start %v clock %s; want the pod's index, completions %d, START_AT, redis", index, ff.Index, ff.Procs, ff.StartAt, ff.Clock, completions)
		}
		if f.collect.Addr == "" || f.collect.RunID != "20261123T115800Z" {
			t.Errorf("index %d: --collect %q --run %q: want the results collected under RUN_ID", index, f.collect.Addr, f.collect.RunID)
		}
	}
}
