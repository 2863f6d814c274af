package docker_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"github.com/lockbench/lockbench/conn/certgen"
)

const (
	secureUser     = "bench"
	securePassword = "pw-docker-5f0c1e9a77"
)

// secureOptions are Options for nodes that require secureUser and speak TLS only, with
// certificates from a throwaway CA.
func secureOptions(t *testing.T, image string) docker.Options {
	t.Helper()
	ca, err := certgen.NewCA(t.TempDir(), "docker test CA")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Issue(certgen.Cert{})
	if err != nil {
		t.Fatal(err)
	}
	return docker.Options{Image: image,
		Auth: &docker.Auth{User: secureUser, Password: securePassword},
		TLS:  &docker.TLS{CertFile: cert, KeyFile: key, CAFile: ca.CertFile}}
}

// The password goes into files, never on a command line: not the server's, not redis-cli's.
func TestSecureCommandLines(t *testing.T) {
	opts := secureOptions(t, "")
	cmd, files, err := docker.ServerCommand(opts)
	if err != nil {
		t.Fatal(err)
	}
	create, err := docker.ClusterCreateCommand(opts)
	if err != nil {
		t.Fatal(err)
	}
	if line := strings.Join(append(cmd, create...), " "); strings.Contains(line, securePassword) {
		t.Errorf("the password is on a command line: %s", line)
	}
	conf := files["/lockbench/redis.conf"]
	for _, want := range []string{"user default off", "user bench on >" + securePassword, "masterauth " + securePassword, "tls-replication yes", "tls-cluster yes"} {
		if !strings.Contains(conf, want) {
			t.Errorf("config file lacks %q:\n%s", want, conf)
		}
	}
	if cmd[1] != "/lockbench/redis.conf" || files["/lockbench/password"] != securePassword+"\n" || files["/lockbench/server.key"] == "" {
		t.Errorf("command %v, files %v", cmd, files)
	}
	for _, bad := range []docker.Options{
		{Auth: &docker.Auth{User: "bench", Password: "has space"}},
		{Auth: &docker.Auth{User: "", Password: "pw"}},
		{TLS: &docker.TLS{CertFile: "/nonexistent.crt", KeyFile: opts.TLS.KeyFile, CAFile: opts.TLS.CAFile}},
	} {
		if _, _, err := docker.ServerCommand(bad); err == nil || strings.Contains(err.Error(), "has space") {
			t.Errorf("%+v: error %v; want one that names no password", bad, err)
		}
	}
}

// A single node started with Auth and TLS refuses plaintext and a client without the user,
// answers the user over TLS, and shows the password in neither docker inspect nor its log.
func TestStartSecureOnDocker(t *testing.T) {
	image := dockertest.Image(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	topo, err := docker.Start(ctx, compose.Spec{Kind: compose.KindSingle}, secureOptions(t, image))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { topo.Close() })
	addr := topo.Addrs()[0]
	if _, err := docker.Command(ctx, addr, "PING"); err == nil {
		t.Error("a plaintext PING was answered")
	}
	if _, err := docker.CommandSecure(ctx, addr, true, "", "", "PING"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("PING over TLS without the user: %v; want NOAUTH", err)
	}
	if reply, err := docker.CommandSecure(ctx, addr, true, secureUser, securePassword, "PING"); err != nil || reply != "PONG" {
		t.Errorf("PING over TLS as the user: %q, %v", reply, err)
	}
	if _, err := docker.CommandSecure(ctx, addr, true, secureUser, "not-the-pw-7731", "PING"); err == nil || strings.Contains(err.Error(), "not-the-pw-7731") {
		t.Errorf("a wrong password: %v; want an error that does not repeat it", err)
	}
	cs, _, err := docker.Resources(ctx, docker.LabelTopology+"="+topo.ID())
	if err != nil || len(cs) != 1 {
		t.Fatalf("containers %v, %v", cs, err)
	}
	for _, args := range [][]string{{"inspect", cs[0]}, {"logs", cs[0]}} {
		out, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %v: %v\n%s", args, err, out)
		}
		if strings.Contains(string(out), securePassword) {
			t.Errorf("docker %s shows the password", args[0])
		}
	}
}
