//go:build soak

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotrecovery/slotrecovery/internal/testkit/loadkit"
)

// postgres is the soak's own throwaway cluster: its own data directory, port and socket
// directory, started and stopped with pg_ctl. The machine's shared cluster is never
// touched, so restarting this one harms nobody.
type postgres struct {
	bin, root, data, sock, log string
	port                       int
	cred                       *syscall.Credential // Postgres refuses to run as root
}

// startPostgres runs initdb into a new temporary directory and starts the cluster.
func startPostgres(ctx context.Context) (*postgres, error) {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		return nil, fmt.Errorf("no /usr/lib/postgresql/*/bin/initdb: install the postgresql package (scripts/services.sh does)")
	}
	slices.SortFunc(bins, func(a, b string) int { return pgVersion(a) - pgVersion(b) })
	root, err := os.MkdirTemp("", "slotrec-soak-pg-")
	if err != nil {
		return nil, err
	}
	p := &postgres{bin: filepath.Dir(bins[len(bins)-1]), root: root, data: filepath.Join(root, "data"),
		sock: filepath.Join(root, "sock"), log: filepath.Join(root, "postgres.log")}
	if err := os.Mkdir(p.sock, 0o755); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, Postgres needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		for _, d := range []string{root, p.sock} {
			if err := os.Chown(d, uid, gid); err != nil {
				return nil, err
			}
		}
		if err := os.Chmod(root, 0o755); err != nil {
			return nil, err
		}
	}
	addr, err := loadkit.FreePort()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	p.port, _ = strconv.Atoi(port)
	if out, err := p.run(ctx, "initdb", "-D", p.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"); err != nil {
		p.remove()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := p.start(ctx); err != nil {
		p.remove()
		return nil, err
	}
	return p, nil
}

func pgVersion(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// run runs one of the cluster's binaries as the cluster's owner.
func (p *postgres) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(p.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.cred}
	cmd.Dir = p.root
	return cmd.CombinedOutput()
}

func (p *postgres) start(ctx context.Context) error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off", p.port, p.sock)
	if out, err := p.run(ctx, "pg_ctl", "-D", p.data, "-l", p.log, "-o", opts, "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("pg_ctl start: %v\n%s(its log: %s)", err, out, p.log)
	}
	return nil
}

// stop stops the cluster at once, as a crash would (mode immediate: no checkpoint, the
// next start recovers from the WAL).
func (p *postgres) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := p.run(ctx, "pg_ctl", "-D", p.data, "-m", "immediate", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// url is an admin connection string for the cluster.
func (p *postgres) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
}

// close stops the cluster and removes its directory.
func (p *postgres) close() {
	if err := p.stop(); err != nil {
		say("%v", err)
	}
	p.remove()
}

func (p *postgres) remove() { _ = os.RemoveAll(p.root) }

// redisServer is the soak's own redis-server on a free port, with the settings the
// design asks for (noeviction, AOF every second), so a restart keeps the cooldowns.
type redisServer struct {
	dir, addr, log string
	proc           *loadkit.Process
}

func startRedis(ctx context.Context, dir string) (*redisServer, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("redis-server not found: install the redis-server package (scripts/services.sh does)")
	}
	addr, err := loadkit.FreePort()
	if err != nil {
		return nil, err
	}
	r := &redisServer{dir: dir, addr: addr, log: filepath.Join(dir, "redis.log")}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return r, r.start(ctx)
}

func (r *redisServer) start(ctx context.Context) error {
	host, port, _ := net.SplitHostPort(r.addr)
	var err error
	r.proc, err = loadkit.Start("redis-server", []string{"--bind", host, "--port", port, "--dir", r.dir,
		"--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--maxmemory-policy", "noeviction",
		"--daemonize", "no", "--protected-mode", "no"}, os.Environ(), r.log)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := rdb.Ping(ctx).Err(); err == nil {
			return nil
		}
		if !r.proc.Alive() || time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("redis-server did not answer (its log: %s)", r.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *redisServer) url() string { return "redis://" + r.addr + "/0" }

// kill stops Redis as a crash would: what the AOF has not written yet is lost.
func (r *redisServer) kill() { r.proc.Kill() }

func (r *redisServer) close() {
	if r.proc != nil && r.proc.Alive() {
		r.proc.Kill()
	}
}
