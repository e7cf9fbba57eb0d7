//! Parsers of the kernel's own text: /proc/vmstat, /proc/zoneinfo,
//! /sys/block/*/stat, /proc/PID/stat and ftrace's trace_pipe lines.
