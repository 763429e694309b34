#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CLI tests of cloisterctl verify, cat, list, doctor and the global options (TAP).
# The fixture tree root/ is copied into a temporary --root; the test adds what git cannot
# hold: the template, sockets and their directories, mount sources, GPU device nodes (plain
# files: verify checks that they exist), a materialised dependency set.
#
#   test-ctl.sh CLOISTERCTL TEMPLATE FIXTURE_ROOT
set -uo pipefail

ctl=$1 template=$2 fixture=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integration/tap.sh"

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
root=$work/root
cp -r "$fixture" "$root"
mkdir -p "$root/usr/lib/systemd/system" "$root/srv/in" "$root/srv/models" "$root/dev" "$root/srv/out/writer/data" "$root/srv/out/closed"
chmod 1777 "$root/srv/out/writer"       # what a dynamic user needs (cloister.role(5), Output=)
chmod 0755 "$root/srv/out/closed"
printf '# Output= names a directory that does not exist.\n[Role]\nExec=/usr/bin/true\n[Sandbox]\nNetwork=none\nOutput=/srv/out/absent\n' \
        > "$root/etc/cloister/roles/outmissing.role"
printf '# Output= names a directory the dynamic user cannot write (mode 0755).\n[Role]\nExec=/usr/bin/true\n[Sandbox]\nNetwork=none\nOutput=/srv/out/closed\n' \
        > "$root/etc/cloister/roles/outclosed.role"
cp "$template" "$root/usr/lib/systemd/system/agent@.service"

mksock() { python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1"; }
mkdir -p "$root/run/cloister/services/inference" "$root/run/cloister/services/stale"
mksock "$root/run/cloister/services/inference/service.sock"
chmod 0555 "$root/run/cloister/services/inference"     # the contract (docs/overview.md, Files and search paths)
chmod 0777 "$root/run/cloister/services/stale"         # broken: anyone could plant a socket
touch "$root/dev/nvidiactl" "$root/dev/nvidia-uvm" "$root/dev/nvidia0"
mksock "$root/run/cloister/broker.sock"
sha=$(sha256sum "$root/srv/done/package-lock.json" | cut -d' ' -f1)
mkdir -p "$root/var/cache/cloister/deps/npm-$sha"
touch "$root/var/cache/cloister/deps/npm-$sha/.cloister-complete"

unset CLOISTER_CONFIG_PATH SYSTEMD_UNIT_PATH
C() { "$ctl" --root="$root" "$@"; }
# run CMD…: sets $out, $err, $rc
run() { out=$("$@" 2>"$work/err"); rc=$?; err=$(cat "$work/err"); }
has() { grep -qF -- "$2" <<<"$1"; }
hasnt() { grep -qF -- "$2" <<<"$1"; [ $? -eq 1 ]; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($1) else 1)" <<<"$out"; }
R=$root/etc/cloister/roles
S=$root/etc/cloister/sidecars
# Under --root the socket directory contract wants the owner of the root directory (an image
# is its builder's, as the live / is root's): so every check holds for a normal user too.

# --- global options ---
run "$ctl" --version
check "--version prints the version and exits 0" test "$rc" = 0 -a "${out%% *}" = cloisterctl
run "$ctl" --help
check "--help lists every verb and exits 0" eval 'test $rc = 0 && for v in verify cat list doctor run; do has "$out" "  $v " || exit 1; done'
run "$ctl"
check "no command exits 2 (usage)" test "$rc" = 2
run "$ctl" frobnicate
check "unknown command exits 2 and names it" eval 'test $rc = 2 && has "$err" frobnicate'
run "$ctl" --frobnicate list
check "unknown global option exits 2" test "$rc" = 2
run "$ctl" --root=relative list
check "--root= with a relative directory exits 2" test "$rc" = 2

# --- verify ---
run C verify
check "verify: exit 1 when any file has a problem" test "$rc" = 1
check "verify: a generator refusal as file:line: key: reason" has "$err" "$R/broken.role:5: Invalid Memory= value \"lots\""
check "verify: a drop-in re-opening PrivateNetwork= names the drop-in file:line" \
        has "$err" "agent@reopen.service.d/10-net.conf:2: PrivateNetwork= re-opens a closed surface"
check "verify: a missing sidecar socket names the Service= line" \
        has "$err" "$R/nosock.role:6: Service=: sidecar socket $root/run/cloister/services/ghost/service.sock is missing"
check "verify: a missing ReadOnlyMount= host path names its line" \
        has "$err" "$R/nomount.role:6: ReadOnlyMount=: /srv/absent does not exist"
check "verify: an unmaterialised dependency set names the project's Pip= line" \
        has "$err" "$root/etc/cloister/projects/webapp.project:5: Pip=: dependency set not materialised"
check "verify: a lockfile cloister-deps would refuse (no --hash) is reported with its file:line" \
        has "$err" "$root/srv/unpinned/requirements.lock:1: the requirement has no --hash=sha256"
check "verify: a mount source under another role's Output= (agent-writable) is flagged on its line" \
        has "$err" "$R/reader.role:6: Input=: /srv/out/writer/data lies under role writer's Output=/srv/out/writer"
check "verify: the writer's own Output= (mode 1777) is not flagged" hasnt "$err" "writer.role"
check "verify: a missing Output= directory names its line and how to fix it" \
        has "$err" "$R/outmissing.role:6: Output=: /srv/out/absent does not exist: create it for the agent with \"install -d -m 1777 /srv/out/absent\", or remove Output= to use the directory systemd manages, /var/lib/cloister-output/outmissing"
check "verify: an Output= directory the dynamic user cannot write names its mode and the chmod" \
        has "$err" "$R/outclosed.role:6: Output=: /srv/out/closed (mode 0755) is not writable by the role's dynamic user, whose UID is allocated at start: \"chmod 1777 /srv/out/closed\""
check "verify: good, daemon (broker socket present) and done (materialised) are not reported" \
        all 'grep -qE "good.role|daemon.role|done.project" <<<"$err"; [ $? -eq 1 ]'
check "verify: a sidecar refused by the generator's own loader, as file:line: key: reason" \
        has "$err" "$S/broken.sidecar:5: Invalid Port= value \"99999\" in [Sidecar]"
check "verify: a sidecar's missing ReadOnlyMount= host path names its line" \
        has "$err" "$S/stale.sidecar:7: ReadOnlyMount=: /srv/nomodels does not exist"
check "verify: a GPU device node named by GPUs= that does not exist" \
        has "$err" "$S/stale.sidecar:6: GPUs=: /dev/nvidia1 does not exist"
check "verify: a socket directory writable by others breaks the contract (not generated)" \
        has "$err" "$S/stale.sidecar: socket directory $root/run/cloister/services/stale is writable by group or others"
check "verify: a granted sidecar with no sidecar file is reported on the Service= line" \
        has "$err" "$R/nosock.role:6: Service=: no sidecar file ghost.sidecar"
check "verify: a granted sidecar that is refused is reported on the Service= line" \
        has "$err" "$R/nosock.role:7: Service=: sidecar broken is refused"
check "verify: the good sidecar (mount, GPU 0, 0555 directory present) is not reported" \
        hasnt "$err" inference.sidecar
run C verify good daemon done
check "verify NAME...: exit 0 and silent when those are fine" test "$rc" = 0 -a -z "$err$out"
run C verify inference
check "verify NAME: a sidecar by name, exit 0 when it is fine" test "$rc" = 0 -a -z "$err$out"
run C verify stale
check "verify NAME: a sidecar by name, exit 1 with its problems only" \
        eval 'test $rc = 1 && has "$err" stale.sidecar && ! has "$err" .role'
run C verify broken
check "verify NAME: a name shared by a role and a sidecar selects both" \
        eval 'test $rc = 1 && has "$err" "broken.role:5:" && has "$err" "broken.sidecar:5:"'
run C verify "$S/broken.sidecar"
check "verify FILE: a sidecar file by path selects only it" \
        eval 'test $rc = 1 && has "$err" "broken.sidecar:5:" && ! has "$err" "broken.role"'
printf '[Sidecar]\nExec=/usr/bin/true\n' > "$work/outside.sidecar"
run C verify "$work/outside.sidecar"
check "verify FILE: a sidecar file outside the configuration directories is loaded as given" \
        eval 'test $rc = 1 && has "$err" "outside.sidecar: [Sidecar] Port= is required"' 
run C verify "$R/broken.role"
check "verify FILE: exit 1 for a refused file given by path" eval 'test $rc = 1 && has "$err" "broken.role:5:"'
cat > "$work/outside.role" <<'X'
[Role]
Exec=/usr/bin/true
Bogus=1
X
run C verify "$work/outside.role"
check "verify FILE: a file outside the configuration directories is checked as given" \
        eval 'test $rc = 1 && has "$err" "outside.role:3:" && has "$err" Bogus'
run C verify nosuch
check "verify: an unknown name exits 1 and says so" eval 'test $rc = 1 && has "$err" nosuch'
run C --json verify
check "verify --json: valid JSON, ok=false, per-file problems" \
        json '(not d["ok"]) and {f["name"]: f["ok"] for f in d["files"]}["good"] and not {f["name"]: f["ok"] for f in d["files"]}["broken"]'
check "verify --json: exit 1 like the text form" test "$rc" = 1
check "verify --json: sidecars are files of kind sidecar with their problems" \
        json '[(f["ok"], len(f["problems"])) for f in d["files"] if f["kind"] == "sidecar" and f["name"] == "stale"] == [(False, 3)]'


# cloister.conf refused: nothing is generated, every role fails (and $CLOISTER_CONFIG_PATH wins over --root)
mkdir -p "$work/badconf/roles"
printf '[Sandbox]\nMemory=infinity\n' > "$work/badconf/cloister.conf"
cp "$R/good.role" "$work/badconf/roles/"
run env CLOISTER_CONFIG_PATH="$work/badconf" "$ctl" --root="$root" verify
check "verify: a refused cloister.conf is reported with file:line and fails every role" \
        eval 'test $rc = 1 && has "$err" "$work/badconf/cloister.conf:2" && has "$err" "cloister.conf was refused"'
check "verify: \$CLOISTER_CONFIG_PATH wins over --root= (no fixture role is read)" hasnt "$err" broken.role
run env CLOISTER_CONFIG_PATH="$work/badconf" "$ctl" --root="$root" doctor
check "doctor: a refused cloister.conf is broken, with its file:line, and the role is not generated" \
        eval 'test $rc = 1 && has "$out" "cloister.conf: $work/badconf/cloister.conf:2" && grep -qE "^good +role +broken +refused " <<<"$out"'

# --- cat ---
run C cat good
check "cat: exit 0 for a generated role" test "$rc" = 0
check "cat: starts with the template's path, as systemctl cat does" \
        test "$(head -n1 <<<"$out")" = "# $root/usr/lib/systemd/system/agent@.service"
order=$(grep '^# /' <<<"$out" | sed "s|# $root||" | tr '\n' ' ')
check "cat: drop-ins in systemd's order (by file name; /etc masks /usr/lib)" \
        test "$order" = "/usr/lib/systemd/system/agent@.service /run/systemd/system/agent@good.service.d/10-after.conf /run/systemd/generator/agent@good.service.d/50-cloister.conf /etc/systemd/system/agent@.service.d/60-tune.conf "
check "cat: the generated drop-in is rendered from the role (ExecStart of the shim with --role=good)" \
        has "$out" "--role=good --network=none"
check "cat: the generated drop-in carries the generator's header and SourcePath=" \
        eval 'has "$out" "# Automatically generated by cloister-generator" && has "$out" "SourcePath=$R/good.role"'
check "cat: the masked /usr/lib drop-in is not shown" hasnt "$out" "Nice=10"
run C cat broken
check "cat: a refused role exits 1, says why, still shows what systemd sees (no generated drop-in)" \
        eval 'test $rc = 1 && has "$err" "broken.role:5" && has "$out" "# $root/usr/lib/systemd/system/agent@.service" && hasnt "$out" "# $root/run/systemd/generator"'
run C cat reopen
check "cat: a role refused by a closed surface names the drop-in and shows it" \
        eval 'test $rc = 1 && has "$err" "PrivateNetwork= re-opens" && has "$out" "PrivateNetwork=no"'
check "cat: ... and the generator's refusal drop-in (the shim refuses with the reason)" \
        eval 'has "$out" "# $root/run/systemd/generator/agent@reopen.service.d/50-cloister.conf" && has "$out" "--role=reopen \"--refuse="'
run C cat nosuch
check "cat: an unknown role exits 1" test "$rc" = 1
run C cat
check "cat: no ROLE exits 2" test "$rc" = 2
run C --json cat good
check "cat --json exits 2 (unit text only)" test "$rc" = 2

# --- list ---
run C list
check "list: exit 0" test "$rc" = 0
check "list piped: no header" hasnt "$out" NAME
check "list: a role with mode, limits, grants, state unknown without systemd" \
        eval 'grep -qE "^good +role +ok +none +1G +1\.5 +64 +service:inference +unknown$" <<<"$out"'
check "list: a refused role" eval 'grep -qE "^broken +role +refused " <<<"$out"'
check "list: a mode inherited from cloister.conf (DefaultNetwork=daemon-only)" \
        eval 'grep -qE "^daemon +role +ok +daemon-only +512M +2 +128 " <<<"$out"'
check "list: a sidecar with port, health, limits, GPUs, the roles that reach it, socket and runtime states" \
        eval 'grep -qE "^inference +sidecar +ok +8080 +/health +2G +4 +128 +0 +good +unknown +unknown$" <<<"$out"'
check "list: a refused sidecar (the role granting it is shown)" \
        eval 'grep -qE "^broken +sidecar +refused +- +- +- +- +- +- +nosock +unknown +unknown$" <<<"$out"'
check "list: a sidecar whose socket directory breaks the contract is refused" \
        eval 'grep -qE "^stale +sidecar +refused +8000 +- +512M +2 +128 +1 +- " <<<"$out"'
check "list: projects with their dependency sets" eval 'grep -qE "^webapp +project +ok .*deps:pip" <<<"$out"'
check "list: a role of a project shows its dependency set as a grant" eval 'grep -qE "^coder +role .*deps:pip" <<<"$out"'
run C --legend list
check "list --legend: header line (no escapes into a pipe)" eval 'head -n1 <<<"$out" | grep -q "^NAME  *KIND.*CONFIG.*MODE.*MEMORY.*CPUS.*TASKS.*GRANTS.*STATE"'
run C --json list
check "list --json: a versioned object (\"version\": 1)" json 'd["version"] == 1 and type(d["version"]) is int'
check "list --json: memory and tasks are integers (bytes), cpus a number, never strings" \
        json 'all(type(e[k]) in (int, float, type(None)) and type(e[k]) is not bool for e in d["entries"] for k in ("memory", "cpus", "tasks")) and any(type(e["memory"]) is int for e in d["entries"])'
run C list --json
check "options anywhere: list --json is list with --json" json 'd["version"] == 1 and len(d["entries"]) > 0'
run "$ctl" list --json --root "$root"
check "options anywhere: --root after the verb" json 'any(e["name"] == "good" for e in d["entries"])'
run C verify --json
check "options anywhere: verify --json" json 'd["version"] == 1 and d["ok"] is False'
run C cat good --no-pager
check "options anywhere: cat ROLE --no-pager" eval 'test $rc = 0 && has "$out" "agent@.service"'
run C list --role=good
check "a run option with another verb exits 2" eval 'test $rc = 2 && has "$err" "--role applies only to run"'
run C --json list
check "list --json: valid JSON with the role's fields" \
        json '[e for e in d["entries"] if e["name"] == "good"][0] == {"name": "good", "kind": "role", "config": "ok", "mode": "none", "memory": 1073741824, "cpus": 1.5, "tasks": 64, "grants": ["service:inference"], "unit": "agent@good.service", "state": "unknown"}'
check "list --json: a sidecar entry with its own fields" \
        json '[e for e in d["entries"] if e["name"] == "inference"][0] == {"name": "inference", "kind": "sidecar", "config": "ok", "port": 8080, "health": "/health", "memory": 2147483648, "cpus": 4, "tasks": 128, "gpus": "0", "reached_by": ["good"], "unit": "sidecar@inference.socket", "state": "unknown", "runtime_unit": "sidecar-runtime@inference.service", "runtime_state": "unknown"}'
run C --legend list
check "list --legend: sidecars in a table of their own" \
        eval 'grep -q "^NAME  *KIND  *CONFIG  *PORT  *HEALTH  *MEMORY  *CPUS  *TASKS  *GPUS  *REACHED-BY  *SOCKET  *RUNTIME" <<<"$out"'
run C list extra
check "list: an argument exits 2" test "$rc" = 2

# --- doctor ---
run C doctor
check "doctor: exit 1 when something is broken" test "$rc" = 1
check "doctor: a refused role is broken, with the generator's reason" \
        eval 'grep -qE "^broken +role +broken +refused " <<<"$out" && has "$out" "broken: $R/broken.role:5:"'
check "doctor: a drop-in re-opening PrivateNetwork= refuses the role" \
        eval 'grep -qE "^reopen +role +broken +refused " <<<"$out" && has "$out" "reopen: $root/etc/systemd/system/agent@reopen.service.d/10-net.conf:2: PrivateNetwork="'
check "doctor: missing sidecar sockets (0 of 2 present)" eval 'grep -qE "^nosock +role +broken +yes +- +0/2 " <<<"$out"'
check "doctor: a role granted a sidecar with no sidecar file is reported" \
        has "$out" "nosock: $R/nosock.role:6: Service=: no sidecar file ghost.sidecar"
check "doctor: a healthy sidecar: generated, socket present, reached by good" \
        eval 'grep -qE "^inference +sidecar +ok +yes +present +unknown +unknown +good " <<<"$out"'
check "doctor: a refused sidecar with the loader's reason" \
        eval 'grep -qE "^broken +sidecar +broken +refused +missing +unknown +unknown +nosock +- +-$" <<<"$out" && has "$out" "broken: $S/broken.sidecar:5: Invalid Port="'
check "doctor: a sidecar not generated for its socket directory, with mount and GPU problems" \
        eval 'grep -qE "^stale +sidecar +broken +refused " <<<"$out" && has "$out" "stale: $S/stale.sidecar: socket directory" && has "$out" "stale: $S/stale.sidecar:6: GPUs="'
check "doctor: present sockets (broker for daemon-only, sidecar for good)" \
        eval 'grep -qE "^daemon +role +ok +yes +present " <<<"$out" && grep -qE "^good +role +ok +yes +- +1/1 " <<<"$out"'
check "doctor: an unmaterialised project and its role" \
        eval 'grep -qE "^webapp +project +broken +yes +- +- +missing" <<<"$out" && grep -qE "^coder +role +broken .* missing " <<<"$out"'
check "doctor: a materialised project is fine" eval 'grep -qE "^done +project +ok +yes +- +- +ok" <<<"$out"'
run C doctor --json
check "doctor --json: valid, ok=false, materialised flags per set" \
        json 'not d["ok"] and [i for i in d["items"] if i["name"] == "webapp"][0]["dependencies"][0]["materialised"] is False and [i for i in d["items"] if i["name"] == "done"][0]["dependencies"][0]["materialised"] is True'
check "doctor --json: a sidecar item (generated, socket, unit states, reached_by)" \
        json '[(i["generated"], i["reached_by"], i["socket"]["unit"], i["runtime"]["unit"]) for i in d["items"] if i["kind"] == "sidecar" and i["name"] == "broken"] == [(False, ["nosock"], {"name": "sidecar@broken.socket", "state": "unknown"}, {"name": "sidecar-runtime@broken.service", "state": "unknown"})]'
check "doctor --json: the socket directory's problem is a field" \
        json '[i for i in d["items"] if i["name"] == "stale"][0]["socket"]["directory_problem"] == "is writable by group or others"'
check "doctor --json: a grant names its sidecar file, or null when there is none" \
        json '[(s["name"], s["sidecar_file"] is None, s["sidecar_generated"]) for s in [i for i in d["items"] if i["name"] == "nosock"][0]["services"]] == [("ghost", True, False), ("broken", False, False)]'
check "doctor --json: closed surface and socket presence are fields" \
        json '"PrivateNetwork=" in [i for i in d["items"] if i["name"] == "reopen"][0]["closed_surface"] and [i for i in d["items"] if i["name"] == "nosock"][0]["services"][0]["present"] is False'
# the help read whole first: with pipefail, grep -q leaving early makes systemd-analyze die of
# SIGPIPE, and 257's longer help fails the pipeline
if command -v systemd-analyze >/dev/null && grep -q -- --offline <<<"$(systemd-analyze security --help 2>/dev/null)"; then
        check "doctor: systemd-analyze security exposure of a generated unit" \
                json '(lambda i: type(i["exposure"]) in (int, float) and __import__("re").fullmatch(r"[A-Z]+", i["exposure_level"]))([i for i in d["items"] if i["name"] == "good"][0])'
        check "doctor: systemd-analyze security exposure of a sidecar's runtime and proxy units" \
                json '(lambda x: all(type(x[k]) in (int, float) for k in ("runtime", "proxy")) and all(__import__("re").fullmatch(r"[A-Z]+", x[k]) for k in ("runtime_level", "proxy_level")))([i for i in d["items"] if i["name"] == "inference"][0]["exposure"])'
        check "doctor: no exposure for a sidecar that is not generated" \
                json '[i for i in d["items"] if i["name"] == "broken" and i["kind"] == "sidecar"][0]["exposure"] == {"runtime": None, "runtime_level": None, "proxy": None, "proxy_level": None}'
else
        skip "doctor: systemd-analyze security exposure of a generated unit" "systemd-analyze with --offline not available"
        skip "doctor: systemd-analyze security exposure of a sidecar's runtime and proxy units" "systemd-analyze with --offline not available"
        skip "doctor: no exposure for a sidecar that is not generated" "systemd-analyze with --offline not available"
fi
# a healthy tree: only the roles and projects without problems
for f in broken reopen nosock nomount coder reader outmissing outclosed; do rm "$R/$f.role"; done
rm "$root/etc/cloister/projects/webapp.project" "$root/etc/cloister/projects/unpinned.project"
rm "$S/broken.sidecar" "$S/stale.sidecar"
run C doctor
check "doctor: exit 0 when nothing is broken" test "$rc" = 0
chmod 0755 "$root/run/cloister/services/inference"   # (a normal user cannot unlink in 0555)
rm "$root/run/cloister/services/inference/service.sock"
chmod 0555 "$root/run/cloister/services/inference"
run C doctor
check "doctor: a generated sidecar whose socket is missing is broken" \
        eval 'test $rc = 1 && has "$out" "inference: $S/inference.sidecar: socket $root/run/cloister/services/inference/service.sock is missing"'
chmod 0755 "$root/run/cloister/services/inference"
mksock "$root/run/cloister/services/inference/service.sock"
chmod 0555 "$root/run/cloister/services/inference"
run env CLOISTER_SYSTEMD_ANALYZE=/nonexistent "$ctl" --root="$root" doctor --json
check "doctor: without systemd-analyze the exposure is unknown (null) and nothing fails" \
        eval 'test $rc = 0 && json "[i for i in d[\"items\"] if i[\"name\"] == \"good\"][0][\"exposure\"] is None" && json "[i for i in d[\"items\"] if i[\"name\"] == \"inference\"][0][\"exposure\"] == {\"runtime\": None, \"runtime_level\": None, \"proxy\": None, \"proxy_level\": None}"'
run C verify
check "verify: exit 0 on a healthy tree" test "$rc" = 0
run C doctor --bogus
check "doctor: an unknown option exits 2" test "$rc" = 2

tap_done
