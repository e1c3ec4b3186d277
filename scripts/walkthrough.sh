#!/usr/bin/env bash
# scripts/walkthrough.sh: run the walkthrough (docs/walkthrough.md), exactly the block a
# reader pastes, and check that it still prints what that file says it prints.
#
#   scripts/walkthrough.sh            run it against the server of scripts/dev.sh (or of
#                                     docker compose: see README, "Running with Docker")
#   scripts/walkthrough.sh --print    print the block and stop
#   scripts/walkthrough.sh --update   run it, then replace the file's sample lines with
#                                     what this run printed (review with git diff)
#   CHECK_OUTPUT=0 scripts/walkthrough.sh   run it without comparing the output
#
# The block is the ```sh block after the line "<!-- walkthrough -->" in
# docs/walkthrough.md: that file is its only copy (scripts/fresh-machine.sh runs it through this script). It runs
# with bash -e -o pipefail, so the first failing command stops it; -v echoes each line to
# stderr as it runs. What the commands print on stdout is then held against the file's
# sample lines ("#", three blanks, then the text): each run of sample lines is the output
# of the commands between it and the run before, once ids, API keys, event and session
# ids and appointment times (either date order) are masked on both sides. Exit status: the block's, or 1 when
# it ran but printed something else than the file shows.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
FILE=docs/walkthrough.md

say() { printf 'walkthrough.sh: %s\n' "$*" >&2; }

block=$(awk '/^<!-- walkthrough -->/ { m = 1; next } m && /^```sh/ { on = 1; next } on && /^```/ { exit } on' "$FILE")
if [[ -z $block ]]; then
	say "no \`\`\`sh block after <!-- walkthrough --> in $FILE"
	exit 1
fi
case ${1:-} in
--print)
	printf '%s\n' "$block"
	exit 0
	;;
--update | "") ;;
*)
	say "unknown argument: $1 (--print, --update or none)"
	exit 2
	;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The script to run: the block, with a marker printed where each run of sample lines
# stands. The samples go, one file each, to $work/expected.N.
printf '%s\n' "$block" | awk -v dir="$work" '
	/^#   [^ ]/ {
		if (!in_sample) { n++; in_sample = 1; printf "printf \"@@sample %d\\n\"\n", n }
		sub(/^#   /, "")
		print > (dir "/expected." n)
		next
	}
	{ in_sample = 0; print }
' >"$work/walkthrough.sh"
samples=$(find "$work" -name 'expected.*' | wc -l)

say "running the walkthrough ($(printf '%s\n' "$block" | wc -l) lines, $samples sample outputs)"
set +e
bash -v -e -o pipefail "$work/walkthrough.sh" 2> >(grep --line-buffered -v '^printf "@@sample' >&2) |
	tee "$work/out" | grep --line-buffered -v '^@@sample [0-9]*$'
rc=${PIPESTATUS[0]}
set -e
if ((rc != 0)); then
	say "the walkthrough stopped at a failing command (exit $rc): see above"
	exit "$rc"
fi
if [[ ${CHECK_OUTPUT:-1} == 0 ]]; then
	say "ran to the end (output not compared: CHECK_OUTPUT=0)"
	exit 0
fi

# Split what it printed at the markers: what came before marker N is sample N's.
awk -v dir="$work" 'BEGIN { n = 1 } /^@@sample [0-9]+$/ { n = $2 + 1; next } { print > (dir "/actual." n) }' "$work/out"
# Ids, keys, Stripe ids, short payment links' codes and times change with every run;
# the words do not.
mask() {
	sed -E \
		-e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/<uuid>/g' \
		-e 's/shop_[A-Za-z0-9_-]{20,}/shop_<key>/g' \
		-e 's/evt_sim_[0-9a-f]+/evt_sim_<id>/g' \
		-e 's/cs_test_[A-Za-z0-9]+/cs_test_<id>/g' \
		-e 's#/p/[A-Za-z0-9_-]{22}#/p/<code>#g' \
		-e 's/(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [0-9]{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{1,2}:[0-9]{2}( [AP]M)?/<when>/g' \
		-e 's/(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{1,2} [0-9]{1,2}:[0-9]{2}( [AP]M)?/<when>/g' \
		-e 's/(lun|mar|mi[ée]|jue|vie|s[áa]b|dom)\. [0-9]{1,2} [a-z]{3,4}\.( a las?)? [0-9]{1,2}(:|h)[0-9]{2}( [ap]\. m\.)?/<when>/g' \
		-e 's/[[:space:]]+$//' -e '/^$/d' "$@" 2>/dev/null || true
}
if [[ ${1:-} == --update ]]; then
	# Each run of sample lines in the block becomes what was printed before its marker.
	awk -v dir="$work" '
		/^<!-- walkthrough -->/ { marker = 1 }
		marker && /^```sh/ { on = 1; print; next }
		on && /^```/ { on = 0; marker = 0 }
		on && /^#   [^ ]/ {
			if (!in_sample) {
				n++; in_sample = 1
				f = dir "/actual." n
				while ((getline line < f) > 0) if (line != "") print "#   " line
				close(f)
			}
			next
		}
		{ in_sample = 0; print }
	' "$FILE" >"$work/walkthrough.md"
	cat "$work/walkthrough.md" >"$FILE"
	say "ran to the end; $FILE's $samples sample outputs are now this run's (see git diff $FILE)"
	exit 0
fi
differ=0
for ((i = 1; i <= samples; i++)); do
	if ! diff -u --label "sample $i" --label "printed" <(mask "$work/expected.$i") <(mask "$work/actual.$i") >"$work/diff"; then
		differ=$((differ + 1))
		cat "$work/diff" >&2
	fi
done
if [[ -s $work/actual.$((samples + 1)) ]]; then
	say "printed after the last sample, with no sample in $FILE for it:"
	cat "$work/actual.$((samples + 1))" >&2
	differ=$((differ + 1))
fi
if ((differ)); then
	say "ran to the end, but $differ of the $samples outputs differ from $FILE's samples (above): update it"
	exit 1
fi
say "ran to the end; every output matches $FILE's $samples samples"
