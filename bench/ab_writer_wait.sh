# SPDX-License-Identifier: GPL-2.0
# By hand (not run by bench/run.sh): cp bench/ab_writer_wait.sh build/guest/bench/ &&
# BENCH=1 scripts/vm.sh -k patched -t 900 -- sh -c "ROUNDS=6 WAITS=\"0 5000\" sh /mmext/bench/ab_writer_wait.sh"
# Same-boot A/B of /sys/kernel/mm/lockless_maps/writer_wait_us (0 = queue on mmap_lock at once).
cd /mmext/bench
W=/sys/kernel/mm/lockless_maps/writer_wait_us
orig=$(cat $W) || exit 1
echo "writer_wait_us was $orig"
ROUNDS=${ROUNDS:-8}
for r in $(seq 1 $ROUNDS); do
  # Settings in turn, the order reversed every other round.
  order=${WAITS:-0 5000}
  if [ $((r % 2)) = 0 ]; then
    rev=; for x in $order; do rev="$x $rev"; done; order=$rev
  fi
  for w in $order; do
    echo $w > $W
    echo "@@ab round $r wait $w"
    grep proc_maps_ /proc/vmstat | sed 's/^/@@vmstat-before /'
    ./maps_latency --runs 5 --seconds 2 --pin --schedstats | grep -v '^# bench'
    grep proc_maps_ /proc/vmstat | sed 's/^/@@vmstat-after /'
    ./vma_lookup --vmas 10000 --writer --runs 3 | grep -v '^# bench' | grep -i "10000\|lookup\|read" | head -8
  done
done
echo "$orig" > $W
echo "@@end"
