#!/bin/sh
# manifest-deep: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
"$PY" -c "import sys; open(sys.argv[1], 'w').write('[' * 100000 + ']' * 100000)" "$MINE/manifest.json"
