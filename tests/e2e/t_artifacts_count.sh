# How many artifacts (issue 9, F5): the artifacts tmpfs holds at most 1000 files, directories
# and links (its inodes, a fixed bound the limits table of docs/operations.md states), as many as a result
# lists, so under it every regular file is listed. A tool that writes 10,000 files gets ENOSPC
# from the kernel at the 1001st entry, and the result says the limit was reached, with every
# file it did write listed and copied, and nothing called "not a regular file". Control: 999
# files, all listed, no note. Without a tmpfs (direct: the landlock+seccomp rung, a host
# directory) the collect step's own bound is the only one: the result lists the first 1000 files
# in path order and says how many there were and that the rest were not copied; control: 1000
# files, no note. And what cannot be listed is said, each with its reason, the notes bounded,
# and the result stays decodable: a name that is not UTF-8, a directory too deep, a path over
# the protocol's 4096 bytes (today's build sent it whole in an event's op, over its 1024 bytes,
# and the result never arrived: anvilctl exited 3), and more entries than are noted one by one.
. "$(dirname "$0")/lib.sh"

# N files of one byte each, f00000.txt..., the errno the tool got, if any.
writer() { # NAME N
        cat >"$T/$1" <<PY
made = 0
try:
    for i in range($2):
        with open(f"artifacts/f{i:05d}.txt", "w") as f:
            f.write("x")
        made += 1
    print(f"made {made}")
except OSError as e:
    print(f"made {made}, then errno {e.errno}")
PY
}
note() { # KIND: the messages of the events of that kind
        j "[.events[] | select(.kind == \"$1\") | .message] | join(\"|\")"
}
FULL="artifacts: the limit of 1000 files, directories and links was reached; any made past it was refused"

writer w10000.py 10000
run_json "$T/w10000.py" --timeout 60
expect_eq "10,000 files: status" ok "$(j .status)"
expect_eq "10,000 files: the kernel refused the 1001st (ENOSPC)" "made 1000, then errno 28" "$(j .stdout)"
expect_eq "10,000 files: all that were made are listed" 1000 "$(j '.artifacts | length')"
expect_eq "10,000 files: the first and last" "f00000.txt f00999.txt" "$(j '"\(.artifacts[0].path) \(.artifacts[-1].path)"')"
expect_eq "10,000 files: the limit, said" "$FULL" "$(note artifacts_entries_full)"
expect_eq "10,000 files: nothing skipped (no 'not a regular file')" 0 \
        "$(j '[.events[] | select(.kind == "artifact_skipped" or .kind == "artifacts_not_listed")] | length')"
expect_eq "10,000 files: copied on the host" 1000 "$(find "$(j .artifacts_dir)" -type f | wc -l)"

# In directories: they count as entries too (5 directories and 995 files are 1000 entries).
tool dirs.py <<'PY'
import os
made = 0
try:
    for d in range(10):
        os.mkdir(f"artifacts/d{d}")
        for i in range(200):
            with open(f"artifacts/d{d}/f{i:03d}", "w") as f:
                f.write("x")
            made += 1
except OSError as e:
    print(f"made {made} files in {d + 1} directories, then errno {e.errno}")
PY
run_json "$T/dirs.py" --timeout 60
expect_eq "files in directories: ENOSPC at the 1001st entry" "made 995 files in 5 directories, then errno 28" "$(j .stdout)"
expect_eq "files in directories: all listed" 995 "$(j '.artifacts | length')"
expect_eq "files in directories: the limit, said" "$FULL" "$(note artifacts_entries_full)"

writer w999.py 999
run_json "$T/w999.py" --timeout 60
expect_eq "control, 999 files: made" "made 999" "$(j .stdout)"
expect_eq "control, 999 files: listed" 999 "$(j '.artifacts | length')"
expect_eq "control, 999 files: no note" 0 \
        "$(j '[.events[] | select(.kind | startswith("artifact"))] | length')"

# /tmp has a bound on its entries too (4096, beside matplotlib's directory and font cache): the
# kernel refuses the tool with ENOSPC, where before only memory bounded it. The jail's pid 1
# looks at /tmp when the runner ends (it goes with the jail), and the result says it was full.
# Control: 1000 files in /tmp, no note. Then its size: a tool that fills its bytes (the files
# cap, 64 MiB by default), and one that writes 32 MiB.
tool tmpmany.py <<'PY'
made = 0
try:
    for i in range(10000):
        open(f"/tmp/f{i:05d}", "w").close()
        made += 1
    print(f"made {made}")
except OSError as e:
    print(f"made {made}, then errno {e.errno}")
PY
run_json "$T/tmpmany.py" --timeout 60
expect_match "/tmp: ENOSPC before 4096 files" "^made 40[0-9][0-9], then errno 28$" "$(j .stdout)"
expect_eq "/tmp: the result's note" "/tmp: the limit of 4096 files, directories and links was reached; any made past it was refused" \
        "$(j '.events[] | select(.kind == "tmp_entries_full") | .message')"
sed -i 's/range(10000)/range(1000)/' "$T/tmpmany.py"
run_json "$T/tmpmany.py" --timeout 60
expect_eq "/tmp, control: 1000 files" "made 1000" "$(j .stdout)"
expect_eq "/tmp, control: no note" 0 "$(j '[.events[] | select(.kind | startswith("tmp_"))] | length')"
tool tmpbig.py <<'PY'
# files of 16 MiB each (one of the files cap's size would meet RLIMIT_FSIZE first, EFBIG)
try:
    for k in range(N):
        with open(f"/tmp/big{k}.bin", "wb") as f:
            for _ in range(256):
                f.write(b"x" * 65536)
    print("wrote it all")
except OSError as e:
    print(f"errno {e.errno}")
PY
sed 's/range(N)/range(5)/' "$T/tmpbig.py" >"$T/tmpfill.py"
run_json "$T/tmpfill.py"
expect_eq "/tmp filled: the tool's error" "errno 28" "$(j .stdout)"
expect_eq "/tmp filled: the result's note" "/tmp: its size of 67108864 bytes (the files cap) was reached; any write past it was refused" \
        "$(j '.events[] | select(.kind == "tmp_full") | .message')"
sed 's/range(N)/range(2)/' "$T/tmpbig.py" >"$T/tmphalf.py"
run_json "$T/tmphalf.py"
expect_eq "/tmp half full: the tool" "wrote it all" "$(j .stdout)"
expect_eq "/tmp half full: no note" 0 "$(j '[.events[] | select(.kind | startswith("tmp_"))] | length')"

# Without a tmpfs: the collect step's own bound.
start_sup direct 710000000 --test-no-userns --test-no-python-layers --spares 0 --max-runs 2
writer w1200.py 1200
ANVIL_SOCKET="$T/direct.sock" run_json "$T/w1200.py" --timeout 60
expect_eq "direct, 1200 files: made (no inode bound here)" "made 1200" "$(j .stdout)"
expect_eq "direct, 1200 files: listed" 1000 "$(j '.artifacts | length')"
expect_eq "direct, 1200 files: the first 1000 in path order" "f00000.txt f00999.txt" \
        "$(j '"\(.artifacts[0].path) \(.artifacts[-1].path)"')"
expect_eq "direct, 1200 files: the note" \
        "artifacts: 1200 regular files, 1000 listed and copied; the other 200 were neither copied nor listed (a result lists at most 1000)" \
        "$(note artifacts_not_listed)"
expect_eq "direct, 1200 files: no 'not a regular file'" 0 "$(j '[.events[] | select(.kind == "artifact_skipped")] | length')"
expect_eq "direct, 1200 files: copied on the host" 1000 "$(find "$(j .artifacts_dir)" -type f | wc -l)"
writer w1000.py 1000
ANVIL_SOCKET="$T/direct.sock" run_json "$T/w1000.py" --timeout 60
expect_eq "direct, control, 1000 files: listed" 1000 "$(j '.artifacts | length')"
expect_eq "direct, control, 1000 files: no note" 0 "$(j '[.events[] | select(.kind | startswith("artifact"))] | length')"

# Direct: RLIMIT_FSIZE (the files cap) bounds each file, and the result says which reached it.
tool big.py <<'PY'
chunk = b"z" * (1024 * 1024)
for name in ("big1.bin", "big2.bin"):
    try:
        with open(f"artifacts/{name}", "wb") as f:
            for _ in range(70):
                f.write(chunk)
                f.flush()
    except OSError as e:
        print(f"{name}: errno {e.errno}")
with open("artifacts/small.bin", "wb") as f:
    f.write(chunk)
PY
ANVIL_SOCKET="$T/direct.sock" run_json "$T/big.py" --timeout 60
expect_eq "direct, 70 MB files: the tool got EFBIG" "big1.bin: errno 27 big2.bin: errno 27" "$(j .stdout | grep . | paste -sd' ')"
expect_eq "direct, 70 MB files: listed at the cap" "big1.bin 67108864 big2.bin 67108864 small.bin 1048576" \
        "$(j '[.artifacts[] | "\(.path) \(.bytes)"] | join(" ")')"
expect_eq "direct, 70 MB files: the note" \
        "artifacts: the limit of 67108864 bytes for one file was reached by 2 (the first: 'big1.bin'); any write past it was refused" \
        "$(note artifacts_full)"
ANVIL_SOCKET="$T/direct.sock" run_json "$T/w1000.py" --timeout 60
expect_eq "direct, control, small files: no such note" "" "$(note artifacts_full)"

# What cannot be listed, each with its reason; the result still arrives whole.
tool odd.py <<'PY'
import os
os.mkdir(b"artifacts/\xff\xfe")
open(b"artifacts/\xff\xfe/inside.txt", "w").write("x")
open(b"artifacts/bad\xffname.bin", "wb").write(b"x")
deep = "artifacts/" + "/".join(f"d{i}" for i in range(17))
os.makedirs(deep)
open(deep + "/lost.txt", "w").write("x")
open("artifacts/" + "/".join(f"d{i}" for i in range(16)) + "/kept.txt", "w").write("x")
fd = os.open("artifacts", os.O_RDONLY)  # a path over PATH_MAX, made a directory at a time
for i in range(16):
    os.mkdir("L" * 250, dir_fd=fd)
    sub = os.open("L" * 250, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = sub
os.close(os.open("f" * 250, os.O_WRONLY | os.O_CREAT, dir_fd=fd))
print("done")
PY
bare_json "$T/odd.py"
expect_eq "odd names: the tool ran" "ok done" "$(j '"\(.status) \(.stdout)"')"
expect_eq "odd names: what is listed" "d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15/kept.txt" "$(j '[.artifacts[].path] | join(" ")')"
skipped=$(j '[.events[] | select(.kind == "artifact_skipped") | .message] | .[]')
grep -qxF "artifact directory '$(printf '\xef\xbf\xbd\xef\xbf\xbd')' is not listed, nor anything in it: its name is not UTF-8" <<<"$skipped" ||
        fail "no note for the directory with a name that is not UTF-8: $skipped"
grep -qxF "artifact 'bad$(printf '\xef\xbf\xbd')name.bin' is not listed: its name is not UTF-8" <<<"$skipped" ||
        fail "no note for the file with a name that is not UTF-8: $skipped"
grep -qxF "artifact directory 'd0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15/d16' is not listed, nor anything in it: it is more than 16 directories deep" <<<"$skipped" ||
        fail "no note for the directory too deep: $skipped"
expect_match "the path over 4096 bytes, shown cut" "^artifact 'L{250}/L{250}/L{10}\.\.\.' is not listed: its path is longer than 4096 bytes$" \
        "$(grep "longer than" <<<"$skipped")"
echo "ok: each entry that cannot be listed is noted with its reason"
expect_eq "odd names: four notes" 4 "$(j '[.events[] | select(.kind == "artifact_skipped")] | length')"
expect_eq "every op within the protocol's 1024 bytes" true "$(j '[.events[].op // "" | utf8bytelength <= 1024] | all')"

# More entries that cannot be listed than are noted one by one: the others are counted.
tool links.py <<'PY'
import os
for i in range(20):
    os.symlink("/etc/passwd", f"artifacts/l{i:02d}")
PY
bare_json "$T/links.py"
expect_eq "20 links: noted one by one, the first 16" "l00 l15" \
        "$(j '[.events[] | select(.kind == "artifact_skipped") | .op] | "\(.[0]) \(.[-1])"')"
expect_eq "20 links: 16 notes" 16 "$(j '[.events[] | select(.kind == "artifact_skipped")] | length')"
expect_eq "20 links: the others, counted" \
        "artifacts: 4 more entries were not listed (not regular files, or not listable); only the first 16 are noted" \
        "$(note artifacts_skipped)"
tool links16.py <<'PY'
import os
for i in range(16):
    os.symlink("/etc/passwd", f"artifacts/l{i:02d}")
PY
bare_json "$T/links16.py"
expect_eq "control, 16 links: 16 notes" 16 "$(j '[.events[] | select(.kind == "artifact_skipped")] | length')"
expect_eq "control, 16 links: no count" "" "$(note artifacts_skipped)"
