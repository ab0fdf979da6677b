#!/bin/sh
# The test OTLP receiver's package: npm's @opentelemetry/otlp-transformer, whose generated
# protobufjs root holds the official OTLP definitions (0.208.0: later releases no longer ship it),
# installed into DIR/node_modules for the tests alone (never a product dependency, never
# committed). Exits 77 (the tests skip) when node or npm is missing or the registry can't be reached.
#   install_receiver.sh DIR
set -u
dir=$1
version=0.208.0
marker="$dir/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js"
[ -f "$marker" ] && grep -q "\"version\": \"$version\"" "$dir/node_modules/@opentelemetry/otlp-transformer/package.json" && exit 0
command -v node >/dev/null 2>&1 || { echo "node is missing (apt-get install nodejs)"; exit 77; }
command -v npm >/dev/null 2>&1 || { echo "npm is missing (apt-get install npm)"; exit 77; }
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"name":"dibs-otlp-test-receiver","private":true}' > "$dir/package.json"
if ! (cd "$dir" && timeout 300 npm install --no-audit --no-fund --ignore-scripts "@opentelemetry/otlp-transformer@$version"); then
  echo "npm could not install @opentelemetry/otlp-transformer@$version (no registry?)"
  exit 77
fi
[ -f "$marker" ] || { echo "the package has no generated protobuf root at $marker"; exit 1; }
