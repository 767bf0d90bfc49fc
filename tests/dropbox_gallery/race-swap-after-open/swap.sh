#!/bin/sh
set -e
ln -sf "$THEIRS/files/tiled.cu" "$MINE/files/tiled.cu.new"
mv -f "$MINE/files/tiled.cu.new" "$MINE/files/tiled.cu"
