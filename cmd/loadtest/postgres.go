package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// statement is one line of Postgres's view of a scenario.
type statement struct {
	Query         string  `json:"query"`
	Calls         int64   `json:"calls"`
	CallsPerReply float64 `json:"calls_per_reply"`
	TotalMS       float64 `json:"total_ms"`
	MeanMS        float64 `json:"mean_ms"`
}

// resetStatements starts pg_stat_statements afresh for a scenario. Without the
// extension (it must be in shared_preload_libraries) the statements report is left out.
func (h *harness) resetStatements(ctx context.Context) {
	if h.noStatements {
		return
	}
	if _, err := h.pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		h.noStatements = true
		return
	}
	if _, err := h.pool.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
		say("no statements report: %v (load pg_stat_statements through shared_preload_libraries to get one)", firstLine(err.Error()))
		h.noStatements = true
	}
}

// topStatements returns the statements of this run's database that took the most time
// since resetStatements, with their calls per reply.
func (h *harness) topStatements(ctx context.Context, replies int) []statement {
	if h.noStatements || replies == 0 {
		return nil
	}
	rows, err := h.pool.Query(ctx, `
		SELECT regexp_replace(query, '\s+', ' ', 'g'), calls, total_exec_time, mean_exec_time
		FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query NOT LIKE '%pg_stat_statements%'
		ORDER BY total_exec_time DESC LIMIT 10`)
	if err != nil {
		say("statements report: %v", err)
		return nil
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (statement, error) {
		var s statement
		err := r.Scan(&s.Query, &s.Calls, &s.TotalMS, &s.MeanMS)
		s.CallsPerReply = float64(s.Calls) / float64(replies)
		if len(s.Query) > 90 {
			s.Query = s.Query[:90] + "…"
		}
		return s, err
	})
	if err != nil {
		say("statements report: %v", err)
		return nil
	}
	return out
}

// postgresPids returns the processes of the Postgres server the run's database lives on
// (the postmaster's children), when it runs on this machine; none otherwise.
func (h *harness) postgresPids(ctx context.Context) []int {
	var backend int
	if err := h.pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return nil
	}
	postmaster := parentPid(backend)
	if postmaster <= 1 {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentPid(pid) == postmaster {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parentPid reads a process's parent from /proc (0 when it cannot be read).
func parentPid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0
	}
	fields := strings.Fields(s[i+2:])
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
