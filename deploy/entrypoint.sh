#!/bin/sh
# The image's entry point: runs the process's command. Each container counts its metrics in
# a folder of its own (PROMETHEUS_MULTIPROC_DIR), emptied first: a container's process ids
# repeat from one run to the next, and the files of the last run would be read as this one's.
set -e
if [ -n "$PROMETHEUS_MULTIPROC_DIR" ]; then
  rm -rf "$PROMETHEUS_MULTIPROC_DIR"
  mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
fi
exec "$@"
