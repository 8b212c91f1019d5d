# The kernel's memory figures, read from the run's cgroup at its end: its peak (v2 memory.peak,
# v1 memory.max_usage_in_bytes) covers what the tool allocated; a tool that outgrows the
# cgroup's hard limit where the 20 ms sampler cannot see it is killed by the kernel's OOM
# killer and reported as a memory kill, by the cgroup layer, with the kernel's peak and its OOM
# kill count; the control within the limit shows no OOM kill. The hard limit is read back.
. "$(dirname "$0")/lib.sh"
skip_if_rootless "no cgroup is delegated to an ordinary user here: rootless runs have none, and say so"
ge() { $PY -c "import sys; sys.exit(0 if float('$1') >= float('$2') else 1)"; }

tool alloc.py <<'PY'
block = b"x" * (150 * 1024 * 1024)
print(len(block))
PY
run_json "$T/alloc.py" --memory 512
expect_eq "150 MB under a 512 MB cap: status" ok "$(j .status)"
[ "$(j .cgroup)" != null ] || fail "no cgroup figures: $(j .isolation.mechanisms)"
version=$(j .cgroup.version)
expect_eq "the figures' version is the mechanism's" 1 \
        "$(j "[.isolation.mechanisms[] | select(startswith(\"cgroup $version (memory hard limit 640 MB, pids 64\"))] | length")"
peak=$(j .cgroup.memory_peak_bytes)
[ "$peak" != null ] || fail "the kernel's peak is not in the result (kernel without memory.peak?)"
[ "$peak" -ge $((150 * 1024 * 1024)) ] || fail "the kernel's peak $peak is below the 150 MiB the tool allocated"
echo "ok: the kernel's peak $peak bytes covers the 150 MiB allocated"
ge "$(j .peak_rss_mb)" 150 || fail "peak_rss_mb $(j .peak_rss_mb) is below the 150 MiB allocated"
echo "ok: peak_rss_mb $(j .peak_rss_mb)"
expect_eq "no OOM kill within the limit" 0 "$(j .cgroup.oom_kills)"

# Kernel memory (here page tables: a read of each 2 MiB of a large anonymous mapping maps the
# shared zero page, which is no one's memory, and costs a page table of 4 KiB) is charged to
# the run's cgroup but is not the anonymous or shared memory the sampler watches: only the
# hard limit (the 64 MB cap plus 64 MB) stops it, by the kernel's OOM killer. (Empty files in
# /tmp did this before /tmp had a bound of its own on its entries.)
tool pagetables.py <<'PY'
import mmap
size = 256 << 30
MAP_NORESERVE = 0x4000  # Linux's; Python 3.11's mmap does not name it
m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE, prot=mmap.PROT_READ)
m.madvise(mmap.MADV_NOHUGEPAGE)  # small pages: one page table per 2 MiB, not the huge zero page
for off in range(0, size, 2 << 20):
    m[off]
PY
run_json "$T/pagetables.py" --memory 64 --cpu 120 --timeout 180 # slow machines (an emulated VM) need the time
expect_eq "outgrowing the hard limit: status" killed "$(j .status)"
killed=$(j .killed)
expect_match "killed for memory" '^killed: memory \(peak [0-9]+\.[0-9] MB > 64 MB cap\)$' "$killed"
expect_eq "the kill is the cgroup layer's" cgroup "$(j '.events[] | select(.kind == "killed") | .layer')"
oom=$(j .cgroup.oom_kills)
[ "$oom" != null ] && [ "$oom" -ge 1 ] || fail "oom_kills is $oom, expected at least 1"
echo "ok: the kernel's OOM killer: oom_kills = $oom"
kpeak=$(j .cgroup.memory_peak_bytes)
said=$(sed -E 's/.*peak ([0-9.]+) MB.*/\1/' <<<"$killed")
expect_eq "the message's peak is the kernel's" "$($PY -c "print(f'{$kpeak / 1048576:.1f}')")" "$said"
ge "$said" 64 || fail "the reported peak $said MB is not above the 64 MB cap"
$PY -c "import sys; sys.exit(0 if float('$(j .peak_rss_mb)') == float('$said') else 1)" ||
        fail "peak_rss_mb $(j .peak_rss_mb) is not the kernel's peak $said"
echo "ok: peak_rss_mb is the kernel's peak, $said MB"
expect_serving
