#!/bin/sh
# A headless desk for trying the emergency stop by hand: an outer Xvfb (the operator's
# screen) with an inner Xephyr session on it. Keys injected on the OUTER display reach the
# inner server through Xephyr's own keyboard, so the inner server sees them as physical;
# keys injected on the INNER display are synthetic. See docs/x11-provenance.md.
#
#   scripts/xharness.sh start OUTER INNER   e.g. start 60 61; prints the two PIDs
#   scripts/xharness.sh stop OUTER INNER    stops the servers started by `start`
#
#   DISPLAY=:60 xdotool key ctrl+alt+shift+s   # physical, as seen on :61
#   DISPLAY=:61 xdotool key ctrl+alt+shift+s   # injected, as seen on :61
set -eu

usage() { echo "usage: $0 start|stop OUTER INNER (display numbers, e.g. 60 61)" >&2; exit 2; }
[ $# -eq 3 ] || usage
cmd=$1; outer=$2; inner=$3
case $outer$inner in *[!0-9]*|'') usage ;; esac
piddir=${XDG_RUNTIME_DIR:-/tmp}/mcec-xharness
mkdir -p "$piddir"

wait_display() {
    i=0
    until xdpyinfo -display ":$1" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -le 300 ] || { echo "display :$1 never answered" >&2; return 1; }
        sleep 0.05
    done
}

stop_pid() {
    f=$piddir/$1.pid
    [ -f "$f" ] || return 0
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null || true
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 60 ]; do sleep 0.05; i=$((i + 1)); done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$f"
}

case $cmd in
start)
    Xvfb ":$outer" -screen 0 1280x1024x24 -nolisten tcp -noreset >/dev/null 2>&1 &
    echo $! > "$piddir/$outer.pid"
    wait_display "$outer"
    xset -display ":$outer" r off
    DISPLAY=":$outer" Xephyr ":$inner" -screen 1024x768 -ac -noreset -nolisten tcp -no-host-grab >/dev/null 2>&1 &
    echo $! > "$piddir/$inner.pid"
    wait_display "$inner"
    xset -display ":$inner" r off
    w=$(DISPLAY=":$outer" xdotool search --sync --class Xephyr | head -1)
    DISPLAY=":$outer" xdotool windowfocus --sync "$w"
    DISPLAY=":$outer" xdotool mousemove --window "$w" 200 200
    echo "outer :$outer pid $(cat "$piddir/$outer.pid")"
    echo "inner :$inner pid $(cat "$piddir/$inner.pid") (Xephyr window $w)"
    ;;
stop)
    stop_pid "$inner"
    stop_pid "$outer"
    ;;
*) usage ;;
esac
