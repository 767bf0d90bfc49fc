#!/bin/sh
# huge-file: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
"$PY" -c "import sys; open(sys.argv[1], 'a').write('// ' + 'x' * 300000 + '\n')" "$MINE/files/tiled.cu"
"$PY" "$GALLERY/rehash.py" "$MINE"
