#!/usr/bin/env bash
# Builds one app's image from images/app/Dockerfile: `bash scripts/build-image.sh <app> [docker build args]`.
# The tag is ${CELLFED_IMAGE_REPOSITORY:-ghcr.io/cellfed}/<app>:${CELLFED_IMAGE_TAG:-0.1.0}; the image's
# description is the app's package.json description. Run from anywhere; the context is the repository root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
app="${1:?usage: build-image.sh <app> [docker build args]}"
shift
manifest="packages/$app/package.json"
[ -f "$manifest" ] || { echo "build-image: no app named $app (no $manifest)" >&2; exit 1; }
description="$(sed -n 's/^  "description": "\(.*\)",$/\1/p' "$manifest")"
version="${CELLFED_IMAGE_TAG:-0.1.0}"
exec docker build -f images/app/Dockerfile \
  --build-arg "APP=$app" --build-arg "DESCRIPTION=$description" --build-arg "VERSION=$version" \
  -t "${CELLFED_IMAGE_REPOSITORY:-ghcr.io/cellfed}/$app:$version" "$@" .
