#!/bin/sh
# Fetches the sources of the real programs benches/compare.py builds
# (scenarios `lua` and `sqlite`) into benches/sources/, which git ignores:
# nothing of theirs is committed.
#
#   benches/fetch_sources.sh             # both
#   benches/fetch_sources.sh lua         # one
#
# Lua 5.4.8: the upstream repository at tag v5.4.8 (needs git). Debian's
# source package has the same files: add a deb-src line, then
# `apt-get source lua5.4` and pass its src/ with --lua-src.
# SQLite: the amalgamation (sqlite3.c, sqlite3.h, shell.c) that the
# `sqlite3` npm package ships in deps/ (needs npm and tar).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=$ROOT/benches/sources
mkdir -p "$DEST"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# want NAME ARGS...: NAME is asked for (or nothing is named).
want() {
    name=$1
    shift
    [ $# -eq 0 ] && return 0
    case " $* " in *" $name "*) return 0 ;; esac
    return 1
}

if want lua "$@"; then
    rm -rf "$DEST/lua"
    git clone --quiet --depth 1 --branch v5.4.8 https://github.com/lua/lua.git "$WORK/lua"
    mkdir -p "$DEST/lua"
    cp "$WORK"/lua/*.c "$WORK"/lua/*.h "$DEST/lua/"
    echo "Lua 5.4.8 in $DEST/lua"
fi
if want sqlite "$@"; then
    rm -rf "$DEST/sqlite"
    (cd "$WORK" && npm pack --silent sqlite3 > /dev/null && tar xzf sqlite3-*.tgz)
    tar xzf "$WORK"/package/deps/sqlite-autoconf-*.tar.gz -C "$WORK"
    mkdir -p "$DEST/sqlite"
    cp "$WORK"/sqlite-autoconf-*/sqlite3.c "$WORK"/sqlite-autoconf-*/sqlite3.h \
        "$WORK"/sqlite-autoconf-*/sqlite3ext.h "$WORK"/sqlite-autoconf-*/shell.c "$DEST/sqlite/"
    echo "SQLite $(sed -n 's/^#define SQLITE_VERSION  *"\(.*\)"/\1/p' "$DEST/sqlite/sqlite3.h") in $DEST/sqlite"
fi
