# An agent's task from the web UI (issue 13): POST /api/tasks against the scripted model
# (tests/model_server.py), its inputs from the folder `anvilctl ui --inputs DIR` passed as
# fds (the broker opens no path of the user's); the events stream live (the model's replies,
# the runs' events) and end with the TaskResult; GET /api/tasks/ID gives the result and its
# trace, the deliverable's artifacts are served; another uid's session sees nothing of it and
# cancels nothing; its owner cancels a task in flight.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
. "$(dirname "$0")/http_lib.sh"
A=65533
B=65532
model_script m <<'PY'
[code('import csv\nrows = list(csv.DictReader(open("inputs/sales.csv")))\nwith open("artifacts/out.csv", "w") as f:\n    f.write("rows\\n%d\\n" % len(rows))\nfinal_answer(len(rows))\n')] * 4
PY
start_model m
model_script slow <<'PY'
[{"delay_s": 30}] * 3
PY
start_model slow
start_web w --model-url "http://127.0.0.1:$PORT_m/v1" --model scripted
mkdir -p "$T/folder/sub"
printf 'region,units\nnorth,3\nsouth,4\n' >"$T/folder/sales.csv"
printf 'not listed\n' >"$T/folder/sub/deep.csv"
ln -s /etc/passwd "$T/folder/link.csv"
chown -R $A "$T/folder" && chmod 700 "$T/folder"
login $A "$T/a.jar" --inputs "$T/folder"
login $B "$T/b.jar"
expect_eq "GET /api/folder: the regular files A's anvilctl opened (no link, no directory)" '{"files":[{"name":"sales.csv","bytes":29}]}' "$(curl -s -b "$T/a.jar" "$ORIGIN/api/folder")"
expect_eq "B's session has no folder" '{"files":[]}' "$(curl -s -b "$T/b.jar" "$ORIGIN/api/folder")"
post() { # JAR PATH BODY
        curl -s -o "$T/post.out" -w '%{http_code}' -b "$1" -X POST -H "Origin: $ORIGIN" --data-binary "$3" "$ORIGIN$2" >"$T/status"
        cat "$T/post.out"
}
expect_eq "B may not use A's folder" "inputs: 'sales.csv' is not a file of the folder given to \`anvilctl ui --inputs\`" "$(post "$T/b.jar" /api/tasks '{"task":"count","inputs":[{"name":"sales.csv","from_folder":"sales.csv"}]}' | jq -r .error.message | sed 's/^the request.s body: //')"
expect_eq "that is a 400" 400 "$(cat "$T/status")"

# ---- the task, followed live ----
tid=$(post "$T/a.jar" /api/tasks '{"task":"count the rows","inputs":[{"name":"sales.csv","from_folder":"sales.csv"}]}' | jq -r .id)
expect_eq "POST /api/tasks: 202" 202 "$(cat "$T/status")"
expect_match "its id" '^task-' "$tid"
curl -s -N -b "$T/a.jar" "$ORIGIN/api/tasks/$tid/events" >"$T/task.sse"
expect_line "the stream has the model's reply" 'data: \{.*"kind":"model_reply".*' "$(cat "$T/task.sse")"
expect_line "and the runs' events" 'data: \{.*"kind":"run_event".*' "$(cat "$T/task.sse")"
expect_eq "it ends with the TaskResult" "event: result" "$(grep '^event:' "$T/task.sse" | tail -1)"
expect_eq "the task's status" ok "$(sed -n 's/^data: //p' "$T/task.sse" | tail -1 | jq -r .status)"
expect_eq "its answer: the folder file's rows, read from A's fd" 2 "$(sed -n 's/^data: //p' "$T/task.sse" | tail -1 | jq -r ".steps[-1].run.final_answer")"
curl -s -b "$T/a.jar" "$ORIGIN/api/tasks/$tid" >"$T/task.json"
expect_eq "GET /api/tasks/ID: the result" ok "$(jq -r .status "$T/task.json")"
expect_match "and its trace" '^[1-9][0-9]*$' "$(jq '.trace | length' "$T/task.json")"
expect_eq "the deliverable's artifact" "rows
2" "$(curl -s -b "$T/a.jar" "$ORIGIN/api/tasks/$tid/artifacts/out.csv")"
expect_eq "GET /api/tasks: A's" "$tid" "$(curl -s -b "$T/a.jar" "$ORIGIN/api/tasks" | jq -r '.entries[0].id')"

# ---- another uid ----
expect_eq "B: A's task: 403" 403 "$(code -b "$T/b.jar" "$ORIGIN/api/tasks/$tid")"
expect_eq "B: A's task's artifact: 403" 403 "$(code -b "$T/b.jar" "$ORIGIN/api/tasks/$tid/artifacts/out.csv")"
expect_eq "B: A's task's events: 403" 403 "$(code -b "$T/b.jar" "$ORIGIN/api/tasks/$tid/events")"
expect_eq "B lists none of A's" "" "$(curl -s -b "$T/b.jar" "$ORIGIN/api/tasks" | jq -r --arg t "$tid" '.entries[] | select(.id == $t) | .id')"

# ---- cancel: the owner may, another may not ----
# a broker whose model answers in 30 s: its task is in flight long enough
start_web w2 --model-url "http://127.0.0.1:$PORT_slow/v1" --model scripted
login $A "$T/a2.jar"
login $B "$T/b2.jar"
sid=$(post "$T/a2.jar" /api/tasks '{"task": "wait"}' | jq -r .id)
expect_match "a slow task started" '^task-' "$sid"
wait_asked slow
expect_eq "B cancels A's task: 404" 404 "$(code -b "$T/b2.jar" -X POST -H "Origin: $ORIGIN" "$ORIGIN/api/tasks/$sid/cancel")"
expect_eq "A's task goes on" "" "$(curl -s -b "$T/a2.jar" "$ORIGIN/api/tasks/$sid" | jq -r '.status // empty')"
expect_eq "A cancels it: 202" 202 "$(code -b "$T/a2.jar" -X POST -H "Origin: $ORIGIN" "$ORIGIN/api/tasks/$sid/cancel")"
curl -s -N -m 20 -b "$T/a2.jar" "$ORIGIN/api/tasks/$sid/events" >"$T/cancel.sse"
expect_eq "its result: cancelled" cancelled "$(sed -n 's/^data: //p' "$T/cancel.sse" | tail -1 | jq -r .status)"
