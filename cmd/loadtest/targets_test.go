package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTargetsJudgeEachFigure: each scenario is held to its own goals, floors and
// ceilings the right way round, and the line names each with its figure.
func TestTargetsJudgeEachFigure(t *testing.T) {
	t.Parallel()
	met := func(ts []target) map[string]bool {
		out := map[string]bool{}
		for _, tg := range ts {
			out[tg.What] = tg.Met
		}
		return out
	}

	race := result{Scenario: "race", Wall: 0.31, Ideal: &idealFigures{Wall: 0.1}, CPUPerReplyMS: 0.2, PostgresCPUPerReplyMS: 0.21, PeakRSSMiB: []float64{50, 66, 58}}
	require.Equal(t, map[string]bool{
		"last answer": true, "last answer ÷ ideal": false, "server CPU per YES": true, "Postgres CPU per YES": false, "peak RSS": false,
	}, met(targets(race)))
	require.Equal(t, "✓ last answer ≤ 0.50 s (0.31 s)  ✗ last answer ÷ ideal ≤ 3.0× (3.1×)  ✓ server CPU per YES ≤ 0.20 ms (0.20 ms)  ✗ Postgres CPU per YES ≤ 0.20 ms (0.21 ms)  ✗ peak RSS ≤ 64.0 MiB (66.0 MiB)",
		printTargets(targets(race)))

	through := result{Scenario: "throughput", PerSecond: 2400, Latency: latencies{P99: 61}, CPUPerReplyMS: 0.21, PeakRSSMiB: []float64{40}}
	require.Equal(t, map[string]bool{"replies/s": true, "p99": false, "server CPU per YES": false, "peak RSS": true}, met(targets(through)))
	require.Contains(t, printTargets(targets(through)), "✓ replies/s ≥ 2000 (2400)")
	through.PerSecond = 1999
	require.False(t, met(targets(through))["replies/s"], "a floor")

	require.Equal(t, map[string]bool{"p99": true, "server CPU per YES": true, "peak RSS": true},
		met(targets(result{Scenario: "flash", Latency: latencies{P99: 50}, CPUPerReplyMS: 0.20, PeakRSSMiB: []float64{64}})), "a limit itself is met; Postgres's CPU not measured, not judged")
	require.Equal(t, map[string]bool{"texts/s": true}, met(targets(result{Scenario: "wave", WaveTexts: 1000, WaveSeconds: 1.04})))
	require.Contains(t, printTargets(targets(result{Scenario: "wave", WaveTexts: 1000, WaveSeconds: 1.24})), "✗ texts/s ≥ 900 (806)", "0.9× the sender's rate")
	require.Nil(t, targets(result{Scenario: "warmup"}))
}

// TestIdealIsTheMedianRun: the ideal server's figures are those of its median run (by
// wall time), whatever order the runs came in, with the fastest and slowest beside them,
// so one lucky or unlucky run no longer sets the race's ratio.
func TestIdealIsTheMedianRun(t *testing.T) {
	t.Parallel()
	runs := []idealFigures{
		{Wall: 0.126, PerSecond: 7900, Latency: latencies{P99: 120}},
		{Wall: 0.042, PerSecond: 23800, Latency: latencies{P99: 40}},
		{Wall: 0.081, PerSecond: 12300, Latency: latencies{P99: 75}},
		{Wall: 0.069, PerSecond: 14500, Latency: latencies{P99: 66}},
		{Wall: 0.090, PerSecond: 11100, Latency: latencies{P99: 85}},
	}
	got := medianIdeal(runs)
	require.Equal(t, &idealFigures{Wall: 0.081, PerSecond: 12300, Latency: latencies{P99: 75}, Runs: 5, WallRange: [2]float64{0.042, 0.126}}, got)
	require.Equal(t, 0.126, runs[0].Wall, "the caller's runs are left in their order")

	one := medianIdeal(runs[:1])
	require.Equal(t, 0.126, one.Wall)
	require.Equal(t, [2]float64{0.126, 0.126}, one.WallRange)
	require.Nil(t, medianIdeal(nil))

	race := result{Scenario: "race", Wall: 0.25, Ideal: got, CPUPerReplyMS: 0.2}
	require.Contains(t, printTargets(targets(race)), "✗ last answer ÷ ideal ≤ 3.0× (3.1×)", "the ratio is to the median run")
}
