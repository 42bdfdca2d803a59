#!/usr/bin/env bash
# Kept for the commands quoted in older messages: installs every Debian package the tests use.
exec bash "$(dirname "$0")/ensure-system-packages.sh"
