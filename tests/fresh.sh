#!/bin/bash
# tests/fresh.sh (make test-fresh): build and test argusq on a brand-new,
# minimal Debian 12, so that a package missing from the Makefile's DEBS
# list cannot hide behind something installed on this machine by hand.
#
#   tests/fresh.sh              the whole check (as root)
#   tests/fresh.sh --preflight  exit 0 if the check can run here, else print
#                               why not on one line and exit 1 (.ci/run uses it)
#
# What a run does:
#  1. A pristine root, `debootstrap --variant=minbase bookworm`, made once and
#     kept as a tarball in $FRESH_CACHE (default /var/cache/argusq-fresh):
#     pristine.tar (+ pristine.info).  It is made again when it is older than
#     FRESH_MAX_AGE_DAYS (30) days, when the mirror changed, or with
#     FRESH_REBUILD=1.  debootstrap is installed on this host when missing.
#  2. Every run unpacks that tarball into a new $FRESH_CACHE/run/root, so no
#     run sees what an earlier run installed; the root is deleted afterwards
#     (FRESH_KEEP=1 keeps it, unmounted, for a look).
#  3. The repository is cloned into the root at the same path as here: the
#     committed HEAD only, uncommitted changes are NOT included
#     (FRESH_WORKTREE=1 copies the working tree instead: tracked and
#     untracked, not ignored, files).  ../shared is bind-mounted read-only
#     beside it, as ../shared.
#  4. In a private mount namespace (unshare -m: whatever happens, none of its
#     mounts is ever visible on the host, and they vanish with it): /proc,
#     /sys (recursively, for /sys/kernel/tracing: the recording tests trace
#     as root), /dev (recursively: /dev/pts, /dev/shm) are bind-mounted into
#     the root and /etc/resolv.conf is copied.  A trap unmounts all of them
#     on exit, on error and on SIGINT/SIGTERM, after ending what still runs
#     in the root.
#  5. Inside, as root: apt gets the same Debian sources as this host (so the
#     same package versions), installs only make, gcc and libc6-dev, then
#     `make demo` and `make test` run, so the Makefile itself must install
#     everything else.  Their output streams through.
#  6. Timings of every phase, then, as the last line, the
#     "tests: N passed, N failed" line of `make test` (tests/run.sh), so
#     CI's reader sees it.  Exit status: that of `make test` (1 also when
#     `make demo` failed; when the set-up failed before the tests ran, the
#     last line is "tests: 0 passed, 1 failed" and the status 1).
#
# Downloaded .deb files are kept in $FRESH_CACHE/debs between runs (only
# those of packages the last run installed) and handed to the next run's
# apt, which checks them against the mirror's index like any download: it
# still decides from scratch what to install, it just does not fetch the
# same file twice.  FRESH_MAKEFLAGS is passed to make inside as MAKEFLAGS.
# `make demo` and `make test` each stop after FRESH_TIMEOUT_MIN (40)
# minutes, so that CI still gets the tests line before its own limit.
#
# Safety: nothing is ever removed with `rm -rf` while something is mounted
# under it (checked with findmnt; the mounts live only in the private
# namespace, the /work/shared bind is read-only, and rm runs with
# --one-file-system), and only paths under $FRESH_CACHE are removed.
set -u
set -o pipefail

SELF=$(readlink -f "$0")
CACHE=${FRESH_CACHE:-/var/cache/argusq-fresh}
CACHE=${CACHE%/}
# everything removed is under $CACHE: it must be a directory of its own
case $CACHE in
  /?*/?*) ;;
  *) echo "fresh: FRESH_CACHE=$CACHE: give an absolute path at least two levels deep"; exit 2 ;;
esac
SUITE=bookworm
DEBIAN_COMPONENTS="main contrib non-free non-free-firmware"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

say() { printf 'fresh: %s\n' "$*"; }

# ---------------------------------------------------------------- helpers

# "1m05s" from seconds
hms() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# phase bookkeeping: phase_begin NAME ... phase_end; the lines go to
# $TIMINGS (shared with the namespace half of the script).
phase_begin() { PHASE=$1; PHASE_T0=$(date +%s); say "== $PHASE"; }
phase_end() {
  local t=$(( $(date +%s) - PHASE_T0 ))
  printf '%s\t%s\n' "$PHASE" "$t" >>"$TIMINGS"
  say "$PHASE took $(hms "$t")"
}

# mount points at or under $1 in this mount namespace, deepest first
mounts_under() {
  findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1' | sort -r
}

# unmount everything at or under $1 (lazily when a plain umount fails:
# a lazy umount detaches the mount at once, so nothing below can be
# reached through it any more)
unmount_under() {
  local m
  for m in $(mounts_under "$1"); do
    umount "$m" 2>/dev/null || umount -l "$m" || say "could not unmount $m"
  done
}

# remove directory $1 (under $CACHE only), never through a mount
safe_rm() {
  local d=$1
  [ -e "$d" ] || return 0
  case $d in
    "$CACHE"/?*) ;;
    *) say "refusing to remove $d (not under $CACHE)"; return 1 ;;
  esac
  unmount_under "$d"
  if [ -n "$(mounts_under "$d")" ]; then
    say "NOT removing $d: still mounted under it:"; mounts_under "$d"; return 1
  fi
  rm -rf --one-file-system "$d"
}

# end the processes whose root directory is $1 (left in a chroot there)
kill_rooted() {
  local sig p pids
  for sig in TERM KILL; do
    pids=
    for p in /proc/[0-9]*; do
      [ "$(readlink "$p/root" 2>/dev/null)" = "$1" ] && pids="$pids ${p#/proc/}"
    done
    [ -z "$pids" ] && return 0
    say "ending processes left in $1:$pids ($sig)"
    kill -"$sig" $pids 2>/dev/null
    sleep 2
  done
}

# The Debian $SUITE entries of this host's apt sources (/etc/apt/sources.list,
# sources.list.d/*.list one-line format, sources.list.d/*.sources deb822):
#   debian_sources entries   one "FILE<TAB>URI<TAB>SUITE" line per URI and suite
#   debian_sources text FILE the lines (or deb822 paragraphs) of FILE to keep
# Left out: deb-src, disabled entries, and what is not Debian's: a suite
# other than bookworm{,-updates,-security,-backports} or a component other
# than Debian's (third-party repositories; on this farm they are disabled
# anyway).
debian_sources() {
  local mode=$1 f files
  if [ "$mode" = text ]; then files=$2
  else files="/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources"; fi
  for f in $files; do
    [ -f "$f" ] || continue
    case $f in *.sources) deb822=1 ;; *) deb822=0 ;; esac
    awk -v f="$f" -v mode="$mode" -v deb822="$deb822" -v comps="$DEBIAN_COMPONENTS" -v suite="$SUITE" '
      function debian_suite(s) {
        return s == suite || s == suite "-updates" || s == suite "-security" || s == suite "-backports"
      }
      BEGIN { n = split(comps, c, " "); for (i = 1; i <= n; i++) ok[c[i]] = 1; if (deb822) RS = "" }
      # one-line format: deb [options] URI SUITE COMPONENT...
      !deb822 && $1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        good = debian_suite($(i + 1))
        for (j = i + 2; j <= NF; j++) if (!($j in ok)) good = 0
        if (!good) next
        if (mode == "text") print; else printf "%s\t%s\t%s\n", f, $i, $(i + 1)
      }
      # deb822: a paragraph of "Field: value" lines
      deb822 {
        types = uris = suites = cs = ""; enabled = "yes"
        m = split($0, line, "\n")
        for (k = 1; k <= m; k++) {
          l = line[k]; if (l ~ /^#/) continue
          key = tolower(l); sub(/:.*/, "", key); val = l; sub(/^[^:]*:[ \t]*/, "", val)
          if (key == "types") types = val; else if (key == "uris") uris = val
          else if (key == "suites") suites = val; else if (key == "components") cs = val
          else if (key == "enabled") enabled = tolower(val)
        }
        if (enabled == "no" || (" " types " ") !~ / deb /) next
        good = 1; nc = split(cs, cc, /[ \t]+/)
        for (k = 1; k <= nc; k++) if (cc[k] != "" && !(cc[k] in ok)) good = 0
        ns = split(suites, ss, /[ \t]+/); nu = split(uris, uu, /[ \t]+/)
        for (k = 1; k <= ns; k++) if (ss[k] != "" && !debian_suite(ss[k])) good = 0
        if (!good) next
        if (mode == "text") { print $0 "\n"; next }
        for (a = 1; a <= nu; a++) for (k = 1; k <= ns; k++)
          if (uu[a] != "" && ss[k] != "") printf "%s\t%s\t%s\n", f, uu[a], ss[k]
      }' "$f"
  done
}

# the mirror debootstrap uses: the host's URI for $SUITE itself
debian_mirror() {
  local m
  m=$(debian_sources entries | awk -F'\t' -v s="$SUITE" '$3 == s { print $2; exit }')
  echo "${m:-http://deb.debian.org/debian}"
}

# does the mirror answer?  apt's own downloader (apt-helper is part of apt,
# so every Debian machine has it; it follows apt's proxy settings): fetch
# the suite's InRelease with short timeouts
mirror_answers() {
  local tmp rc
  tmp=$(mktemp -d)
  timeout 60 /usr/lib/apt/apt-helper -o Acquire::http::Timeout=10 -o Acquire::https::Timeout=10 \
    -o Acquire::Retries=0 -o APT::Sandbox::User=root \
    download-file "$1/dists/$SUITE/InRelease" "$tmp/InRelease" >/dev/null 2>&1
  rc=$?
  rm -rf "$tmp"
  return $rc
}

# the repository and ../shared beside it
REPO=$(cd "$(dirname "$SELF")/.." && pwd -P)
SHARED_HOST=$(readlink -f "$REPO/../shared" 2>/dev/null || true)
GIT="git -c safe.directory=$REPO -c safe.directory=$REPO/.git"

# ---------------------------------------------------------------- preflight

# prints why the check cannot run here, or nothing
why_not() {
  if [ "$(id -u)" != 0 ]; then echo "not root (debootstrap, chroot and mounts need root)"; return; fi
  for c in unshare chroot findmnt flock tar; do
    command -v $c >/dev/null 2>&1 || { echo "no $c on this machine"; return; }
  done
  if ! unshare -m --propagation private true 2>/dev/null; then
    echo "cannot make a private mount namespace (unshare -m failed: not privileged enough)"; return
  fi
  if ! command -v debootstrap >/dev/null 2>&1 && ! command -v apt-get >/dev/null 2>&1; then
    echo "no debootstrap and no apt-get to install it"; return
  fi
  if [ "${FRESH_WORKTREE:-0}" != 1 ] && ! command -v git >/dev/null 2>&1; then echo "no git to clone the repository"; return; fi
  if [ -z "$SHARED_HOST" ] || [ ! -d "$SHARED_HOST" ]; then echo "no ../shared beside $REPO"; return; fi
  # a run needs about 3 GB (the root with the packages and the build,
  # the tarball, the .deb files)
  local d=$CACHE; while [ ! -d "$d" ]; do d=$(dirname "$d"); done
  local free; free=$(df -Pk "$d" | awk 'NR == 2 { print int($4 / 1048576) }')
  if [ "${free:-0}" -lt 5 ]; then echo "only ${free} GB free under $d (5 needed)"; return; fi
  if [ ! -x /usr/lib/apt/apt-helper ]; then echo "no apt (apt-helper) to check the mirror"; return; fi
  local m; m=$(debian_mirror)
  if ! mirror_answers "$m"; then echo "the Debian mirror $m does not answer (no $SUITE InRelease within 60 s)"; return; fi
}

if [ "${1:-}" = --preflight ]; then
  r=$(why_not)
  if [ -n "$r" ]; then echo "$r"; exit 1; fi
  exit 0
fi

# ================================================================ namespace half
# `tests/fresh.sh --in-namespace ROOT REPO_IN SHARED_HOST` runs in the private
# mount namespace that the main half makes with unshare: it mounts, runs
# the phases in the chroot, and unmounts.
if [ "${1:-}" = --in-namespace ]; then
  ROOT=$2 REPO_IN=$3 SHARED_HOST=$4
  TIMINGS=$CACHE/run/timings
  TESTLOG=$CACHE/run/test.log
  STATUS=$CACHE/run/status
  CHILD=

  ns_cleanup() {
    trap - EXIT INT TERM
    [ -n "$CHILD" ] && kill -TERM "$CHILD" 2>/dev/null
    kill_rooted "$ROOT"
    unmount_under "$ROOT"
    if [ -n "$(mounts_under "$ROOT")" ]; then say "still mounted:"; mounts_under "$ROOT"; fi
  }
  trap ns_cleanup EXIT
  trap 'say "signal: stopping"; ns_cleanup; exit 130' INT TERM

  # no mount event of ours may reach the host (unshare made them private;
  # say it again, in case its default changes)
  mount --make-rprivate / || exit 1

  phase_begin "mounts"
  mount --rbind /proc "$ROOT/proc" && mount --make-rslave "$ROOT/proc" &&
  mount --rbind /sys "$ROOT/sys" && mount --make-rslave "$ROOT/sys" &&
  mount --rbind /dev "$ROOT/dev" && mount --make-rslave "$ROOT/dev" &&
  mkdir -p "$ROOT$(dirname "$REPO_IN")/shared" &&
  mount --bind "$SHARED_HOST" "$ROOT$(dirname "$REPO_IN")/shared" &&
  mount -o remount,bind,ro "$ROOT$(dirname "$REPO_IN")/shared" || { say "mounting failed"; exit 1; }
  findmnt -rn -o TARGET,FSTYPE,OPTIONS | awk -v d="$ROOT" 'index($1, d "/") == 1' | grep -v -E "^$ROOT/(proc|sys|dev)/" | sed 's/^/fresh:   /'
  phase_end

  # run a shell command in the root, as root, with a fresh machine's
  # environment (no stdin: CI has none); in the background so that a
  # signal reaches our trap at once
  ENV=(HOME=/root USER=root LOGNAME=root PATH="$CHROOT_PATH")
  for v in CI http_proxy https_proxy no_proxy; do
    [ -n "${!v:-}" ] && ENV+=("$v=${!v}")
  done
  [ -n "${FRESH_MAKEFLAGS:-}" ] && ENV+=("MAKEFLAGS=$FRESH_MAKEFLAGS")
  in_root() {
    chroot "$ROOT" /usr/bin/env -i "${ENV[@]}" DEBIAN_FRONTEND=noninteractive \
      /bin/sh -c "$1" </dev/null 9>&- &
    CHILD=$!
    wait "$CHILD"; local rc=$?
    CHILD=
    return $rc
  }

  phase_begin "apt: make, gcc, libc6-dev"
  in_root 'apt-get update -qq && apt-get install -y -qq --no-install-recommends make gcc libc6-dev >/dev/null &&
           echo "fresh:   $(dpkg-query -W make gcc libc6-dev | tr "\t\n" "= ")"' ||
    { say "installing make and gcc in the root failed"; exit 1; }
  phase_end

  # `make demo`: on a fresh machine this is the first make, so it installs
  # DEBS and builds build/argusq
  # each of them stops after FRESH_TIMEOUT_MIN minutes (40; docs/TESTING.md
  # says why), so that CI still gets the tests line before its own limit
  # (90 minutes)
  limit=${FRESH_TIMEOUT_MIN:-40}m
  phase_begin "make demo"
  in_root "cd '$REPO_IN' && timeout $limit make demo"; demo=$?
  phase_end
  [ "$demo" = 124 ] && say "make demo TIMED OUT after $limit"
  [ "$demo" = 0 ] || say "make demo FAILED (status $demo)"
  echo "$demo" >"$CACHE/run/demo-status"

  phase_begin "make test"
  { in_root "cd '$REPO_IN' && timeout $limit make test"; rc=$?; echo $rc >"$STATUS"
    [ "$rc" = 124 ] && say "make test TIMED OUT after $limit"; } 2>&1 | tee "$TESTLOG"
  phase_end
  exit 0
fi

# ================================================================ main half

if [ "$(id -u)" != 0 ]; then
  say "must run as root (debootstrap, chroot, mounts)"; echo "tests: 0 passed, 1 failed"; exit 1
fi

T_START=$(date +%s)
RUN=$CACHE/run
ROOT=$RUN/root
TIMINGS=$RUN/timings
CHILD=
SETUP_OK=0

mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
if ! flock -n 9; then say "another run holds $CACHE/lock; waiting for it"; flock 9; fi

# the last lines, also after a failure: timings, then the tests line
finish() {
  local rc=$1 line demo f
  trap - EXIT INT TERM
  [ -n "$CHILD" ] && { kill -TERM -- -"$CHILD" 2>/dev/null; wait "$CHILD" 2>/dev/null; }
  # the root: nothing may run or be mounted in it any more
  if [ -d "$ROOT" ]; then
    kill_rooted "$ROOT"
    unmount_under "$ROOT"
  fi
  # keep the .deb files for the next run: after a whole run, exactly those
  # of the packages it installed (older versions go); after a run cut
  # short, the ones it added too
  if [ "$SETUP_OK" = 1 ] && [ -d "$ROOT/var/lib/dpkg" ] && [ -d "$ROOT/var/cache/apt/archives" ]; then
    rm -rf "$CACHE/debs.new"; mkdir -p "$CACHE/debs.new"
    if [ -f "$RUN/status" ]; then
      dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f '${Package}_${Version}_${Architecture}.deb\n' 2>/dev/null |
        sed 's/:/%3a/'
    else
      for f in "$ROOT"/var/cache/apt/archives/*.deb "$CACHE"/debs/*.deb; do
        [ -f "$f" ] && basename "$f"
      done
    fi | while read -r f; do
      [ -f "$ROOT/var/cache/apt/archives/$f" ] && ln "$ROOT/var/cache/apt/archives/$f" "$CACHE/debs.new/$f" 2>/dev/null
    done
    rm -rf "$CACHE/debs"; mv "$CACHE/debs.new" "$CACHE/debs"
  fi
  local t0; t0=$(date +%s)
  if [ "${FRESH_KEEP:-0}" = 1 ] && [ -d "$ROOT" ]; then
    say "FRESH_KEEP=1: the root stays in $ROOT (nothing mounted in it)"
  else
    safe_rm "$ROOT" || rc=1
  fi
  [ -f "$TIMINGS" ] && printf 'cleanup\t%s\n' $(( $(date +%s) - t0 )) >>"$TIMINGS"
  say "timings:"
  cat "$TIMINGS" 2>/dev/null | awk -F'\t' '{ printf "fresh:   %-32s %dm%02ds\n", $1, $2 / 60, $2 % 60 }'
  say "$(printf '  %-32s %s' total "$(hms $(( $(date +%s) - T_START )))")"
  line='' demo=''
  if [ "$SETUP_OK" = 1 ]; then  # (else $RUN may hold an earlier run's logs)
    line=$(grep -a -E '^tests: [0-9]+ passed, [0-9]+ failed$' "$RUN/test.log" 2>/dev/null | tail -n 1)
    demo=$(cat "$RUN/demo-status" 2>/dev/null)
  fi
  if [ "$SETUP_OK" = 1 ] && [ -f "$RUN/status" ]; then
    f=$(cat "$RUN/status")
    [ "$f" = 0 ] && [ "${demo:-1}" != 0 ] && { say "make demo failed in the fresh root"; f=1; }
    rc=$f
  elif [ "$rc" = 0 ]; then
    rc=1
  fi
  if [ -z "$line" ]; then
    if [ "$rc" = 130 ] || [ "$rc" = 143 ]; then say "interrupted before make test printed its result"
    else say "make test printed no result line: the set-up or the build failed (see above)"; fi
    line="tests: 0 passed, 1 failed"
  fi
  echo "$line"
  exit "$rc"
}
trap 'finish $?' EXIT
trap 'say "SIGINT: stopping"; finish 130' INT
trap 'say "SIGTERM: stopping"; finish 143' TERM

# run a command in the background (its own process group), wait for it;
# a signal to this script reaches the trap at once
bg() {
  setsid "$@" 9>&- &
  CHILD=$!
  wait "$CHILD"; local rc=$?
  CHILD=
  return $rc
}

MIRROR=$(debian_mirror)
r=$(why_not)
if [ -n "$r" ]; then say "cannot run here: $r"; exit 1; fi

# ---- a leftover of an earlier run that was killed: end it, unmount, remove
if [ -e "$ROOT" ]; then
  say "removing the root of an earlier run"
  kill_rooted "$ROOT"
fi
safe_rm "$RUN" || exit 1
mkdir -p "$RUN"
: >"$TIMINGS"

# ---- 1. the pristine root, cached
phase_begin "pristine root ($SUITE minbase)"
TAR=$CACHE/pristine.tar INFO=$CACHE/pristine.info
want_info="debootstrap --variant=minbase $SUITE $MIRROR"
rebuild=
if [ ! -f "$TAR" ] || [ ! -f "$INFO" ]; then rebuild="none cached yet"
elif [ "$(head -n 1 "$INFO")" != "$want_info" ]; then rebuild="the mirror or the suite changed"
elif [ "${FRESH_REBUILD:-0}" = 1 ]; then rebuild="FRESH_REBUILD=1"
elif [ -n "$(find "$TAR" -mtime +"${FRESH_MAX_AGE_DAYS:-30}")" ]; then rebuild="older than ${FRESH_MAX_AGE_DAYS:-30} days"
fi
if [ -n "$rebuild" ]; then
  say "making the pristine root: $rebuild"
  if ! command -v debootstrap >/dev/null 2>&1; then
    say "installing debootstrap on this host"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; } ||
      { say "could not install debootstrap"; exit 1; }
  fi
  B=$CACHE/pristine.build
  safe_rm "$B" || exit 1
  kr=; [ -f "$KEYRING" ] && kr=--keyring=$KEYRING
  # in a private mount namespace: debootstrap mounts /proc and /sys in the
  # target while it installs; whatever it leaves mounted dies with it
  if ! bg unshare -m --propagation private debootstrap --variant=minbase $kr --components=main \
         "$SUITE" "$B" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1; then
    tail -n 30 "$CACHE/debootstrap.log"; say "debootstrap failed (log: $CACHE/debootstrap.log)"
    safe_rm "$B"; exit 1
  fi
  unmount_under "$B"
  # a mount point left over would otherwise be packed as an empty directory
  [ -z "$(mounts_under "$B")" ] || { say "mounts left under $B"; exit 1; }
  tar --numeric-owner --xattrs --xattrs-include='*' -C "$B" -cf "$TAR.tmp" . &&
    mv "$TAR.tmp" "$TAR" || { say "could not pack the pristine root"; rm -f "$TAR.tmp"; exit 1; }
  { echo "$want_info"; echo "made $(date -u +%FT%TZ) with debootstrap $(debootstrap --version | awk '{print $2}')"; } >"$INFO"
  safe_rm "$B"
else
  say "cached: $TAR ($(sed -n 2p "$INFO"))"
fi
phase_end

# ---- 2. a fresh copy of it
phase_begin "unpack a fresh root"
mkdir -p "$ROOT"
tar --numeric-owner --xattrs --xattrs-include='*' -C "$ROOT" -xf "$TAR" || { say "unpacking failed"; exit 1; }
# apt: the host's Debian sources (the same versions), its proxy, no services
rm -f "$ROOT/etc/apt/sources.list" "$ROOT"/etc/apt/sources.list.d/*
for f in $(debian_sources entries | cut -f1 | sort -u); do
  case $f in
    /etc/apt/sources.list) out=$ROOT/etc/apt/sources.list ;;
    *) out=$ROOT/etc/apt/sources.list.d/$(basename "$f") ;;
  esac
  debian_sources text "$f" >"$out"
  # the keyrings its entries name (Signed-By: or [signed-by=...])
  grep -o -i -E '(signed-by:|signed-by=)[[:space:]]*/[^] ]+' "$f" | sed -E 's/^[^/]*//' | sort -u |
    while read -r k; do
      [ -f "$k" ] && [ ! -e "$ROOT$k" ] && mkdir -p "$ROOT$(dirname "$k")" && cp "$k" "$ROOT$k"
    done
done
if [ -z "$(cat "$ROOT"/etc/apt/sources.list "$ROOT"/etc/apt/sources.list.d/* 2>/dev/null)" ]; then
  echo "deb $MIRROR $SUITE main" >"$ROOT/etc/apt/sources.list"
fi
say "apt sources of the root:"
grep -h -E '^(deb |URIs|Suites)' "$ROOT"/etc/apt/sources.list "$ROOT"/etc/apt/sources.list.d/* 2>/dev/null | sed 's/^/fresh:   /'
apt-config dump 2>/dev/null | grep -E '^Acquire::(https?|ftp)::Proxy ' >"$ROOT/etc/apt/apt.conf.d/01fresh-proxy"
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"; chmod 755 "$ROOT/usr/sbin/policy-rc.d"
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null
# the .deb files of the last run (hard links: same file system)
if [ -d "$CACHE/debs" ]; then
  for f in "$CACHE"/debs/*.deb; do
    [ -f "$f" ] && { ln "$f" "$ROOT/var/cache/apt/archives/" 2>/dev/null || cp "$f" "$ROOT/var/cache/apt/archives/"; }
  done
  say "$(ls "$CACHE"/debs | wc -l) cached .deb files"
fi
phase_end

# ---- 3. the code
phase_begin "copy the repository"
REPO_IN=$REPO
mkdir -p "$ROOT$REPO_IN"
if [ "${FRESH_WORKTREE:-0}" = 1 ]; then
  say "FRESH_WORKTREE=1: copying the WORKING TREE of $REPO (uncommitted changes included, ignored files not)"
  (cd "$REPO" && $GIT ls-files -z -c -o --exclude-standard --deduplicate |
     tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$ROOT$REPO_IN" -xf - ||
    { say "copying the working tree failed"; exit 1; }
else
  sha=$($GIT -C "$REPO" rev-parse HEAD) || { say "not a git repository: $REPO"; exit 1; }
  dirty=$($GIT -C "$REPO" status --porcelain 2>/dev/null | wc -l)
  say "testing the committed HEAD $($GIT -C "$REPO" log -1 --format='%h %s' HEAD)"
  say "uncommitted changes are NOT included ($dirty changed or untracked paths here); FRESH_WORKTREE=1 copies the working tree"
  { $GIT clone -q --no-hardlinks --no-checkout "$REPO" "$ROOT$REPO_IN" &&
    { $GIT -C "$ROOT$REPO_IN" cat-file -e "$sha^{commit}" 2>/dev/null || $GIT -C "$ROOT$REPO_IN" fetch -q "$REPO" HEAD; } &&
    $GIT -C "$ROOT$REPO_IN" -c advice.detachedHead=false checkout -q --detach "$sha"; } ||
    { say "git clone failed"; exit 1; }
fi
say "../shared: $SHARED_HOST, bind-mounted read-only at $(dirname "$REPO_IN")/shared"
phase_end

# ---- 4. mounts, and the build and the tests in the root
SETUP_OK=1
bg unshare -m --propagation private bash "$SELF" --in-namespace "$ROOT" "$REPO_IN" "$SHARED_HOST"
# (finish, the EXIT trap, cleans up and prints the timings and the tests line)
