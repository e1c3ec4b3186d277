package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// clusterTimeout bounds starting a cluster: redis-cli --cluster create alone
// takes about two seconds, because it polls the join once a second.
const clusterTimeout = 30 * time.Second

// shared is the cluster that concurrent callers of Cluster share. It is
// reference counted: the first caller starts it, the cleanup of the last one
// stops it. Tests that call Cluster before t.Parallel() therefore share one
// cluster; tests that run one after another each start their own.
var shared struct {
	mu   sync.Mutex
	refs int
	c    *cluster
}

// Cluster returns a client for a local Redis Cluster of three masters and no
// replicas (redis-server --cluster-enabled yes, joined with redis-cli
// --cluster create), running as child processes of the test binary on free
// loopback ports. Starting one takes two to three seconds.
//
// The cluster is shared with every other test that holds it at the same time,
// so take a key prefix with Prefix. To share one cluster among many tests,
// call Cluster before t.Parallel(), or once in a parent test whose subtests
// use the client. The cluster is stopped, and its temporary directory
// removed, by the cleanup of the last test holding it; on Linux the nodes
// are also killed if the test binary dies without cleaning up.
//
// If redis-server or redis-cli cannot be found or cannot run here (Redis 7 is
// needed), the test is skipped with the reason. If they run but the cluster
// does not form, the test fails.
func Cluster(t testing.TB) redis.UniversalClient {
	t.Helper()
	c := acquire(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                    c.addrs,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	// Registered after acquire's cleanup, so it runs before the cluster stops.
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func acquire(t testing.TB) *cluster {
	t.Helper()
	var bins [2]string
	for i, name := range []string{"redis-server", "redis-cli"} {
		path, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("redistest: skipping Redis Cluster test: %s not found in PATH (%v); install Redis 7 to run it", name, err)
		}
		bins[i] = path
	}

	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.c == nil {
		ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
		defer cancel()
		c, err := startCluster(ctx, bins[0], bins[1])
		if errors.Is(err, errCannotRun) {
			t.Skipf("redistest: skipping Redis Cluster test: %v", err)
		}
		if err != nil {
			t.Fatalf("redistest: start redis cluster: %v", err)
		}
		shared.c = c
	}
	shared.refs++
	c := shared.c
	t.Cleanup(func() {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		shared.refs--
		if shared.refs == 0 {
			shared.c.stop()
			shared.c = nil
		}
	})
	return c
}

// errCannotRun marks failures that mean this machine cannot run a cluster at
// all (the binaries do not start or reject the options), which skip the test
// instead of failing it.
var errCannotRun = errors.New("redis cannot run here")

type cluster struct {
	dir   string
	addrs []string
	nodes []*node
}

type node struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has been waited for
	log    string        // redis-server's log file
	out    string        // its stdout and stderr
}

func startCluster(ctx context.Context, server, cli string) (*cluster, error) {
	// Ports are picked by binding to port 0 and then released, so another
	// process can take one before redis-server binds it; try again then.
	var err error
	for range 3 {
		var c *cluster
		c, err = startNodes(ctx, server)
		if errors.Is(err, errPortTaken) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := c.join(ctx, cli); err != nil {
			c.stop()
			return nil, err
		}
		return c, nil
	}
	return nil, err
}

var errPortTaken = errors.New("port taken")

func startNodes(ctx context.Context, server string) (*cluster, error) {
	// Six ports: three for clients and three for the cluster bus. The bus
	// port is set explicitly because the default, port+10000, can be above
	// 65535 for the high ports the kernel hands out.
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-cluster-")
	if err != nil {
		return nil, fmt.Errorf("make cluster dir: %w", err)
	}
	c := &cluster{dir: dir}
	for i := range 3 {
		port, bus := ports[i], ports[i+3]
		p := strconv.Itoa(port)
		logPath := filepath.Join(dir, "redis-"+p+".log")
		cmd := exec.Command(server,
			"--port", p,
			"--bind", "127.0.0.1",
			"--cluster-enabled", "yes",
			"--cluster-port", strconv.Itoa(bus),
			"--cluster-config-file", filepath.Join(dir, "nodes-"+p+".conf"),
			"--cluster-node-timeout", "5000",
			"--dir", dir,
			"--logfile", logPath,
			"--save", "",
			"--appendonly", "no",
			"--daemonize", "no",
		)
		cmd.SysProcAttr = procAttr()
		// Errors before the log file opens (a bad option) go to stderr.
		outPath := filepath.Join(dir, "redis-"+p+".out")
		out, err := os.Create(outPath)
		if err != nil {
			c.stop()
			return nil, fmt.Errorf("create %s: %w", outPath, err)
		}
		cmd.Stdout, cmd.Stderr = out, out
		err = cmd.Start()
		_ = out.Close() // the child has its own copy
		if err != nil {
			c.stop()
			return nil, fmt.Errorf("%w: start %s: %v", errCannotRun, server, err)
		}
		n := &node{cmd: cmd, exited: make(chan struct{}), log: logPath, out: outPath}
		go func() {
			_ = cmd.Wait()
			close(n.exited)
		}()
		c.nodes = append(c.nodes, n)
		c.addrs = append(c.addrs, "127.0.0.1:"+p)
	}
	for i, n := range c.nodes {
		if err := waitPing(ctx, c.addrs[i], n); err != nil {
			c.stop()
			return nil, err
		}
	}
	return c, nil
}

// waitPing waits until the node answers PING, or reports why it exited.
func waitPing(ctx context.Context, addr string, n *node) error {
	client := nodeClient(addr)
	defer client.Close()
	for {
		select {
		case <-n.exited:
			log, _ := os.ReadFile(n.log)
			out, _ := os.ReadFile(n.out)
			log = append(out, log...)
			if bytes.Contains(log, []byte("Address already in use")) {
				return errPortTaken
			}
			return fmt.Errorf("%w: redis-server on %s exited (%s): %s", errCannotRun, addr, n.cmd.ProcessState, tail(log))
		default:
		}
		if err := client.Ping(ctx).Err(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for redis-server on %s: %w", addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// join assigns the slots with redis-cli and waits until every node reports
// cluster_state:ok, which means each of them sees all 16384 slots served.
func (c *cluster) join(ctx context.Context, cli string) error {
	args := append([]string{"--cluster", "create"}, c.addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return fmt.Errorf("%w: run %s: %v", errCannotRun, cli, err)
	}
	if err != nil {
		return fmt.Errorf("redis-cli --cluster create: %w: %s", err, tail(out))
	}
	for _, addr := range c.addrs {
		client := nodeClient(addr)
		err := waitClusterOK(ctx, client)
		_ = client.Close()
		if err != nil {
			return fmt.Errorf("wait for cluster_state:ok on %s: %w", addr, err)
		}
	}
	return nil
}

func waitClusterOK(ctx context.Context, client *redis.Client) error {
	for {
		info, err := client.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last answer: %q, %v)", ctx.Err(), info, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop kills the nodes, waits for them and removes their files.
func (c *cluster) stop() {
	for _, n := range c.nodes {
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
	_ = os.RemoveAll(c.dir)
}

func nodeClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:                     addr,
		DialTimeout:              time.Second,
		MaxRetries:               -1,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// All listeners stay open until the end so that the kernel cannot hand out
// the same port twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tail returns the last lines of a log or command output, enough to explain
// a failure without flooding the test output.
func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.Join(lines, "\n")
}
