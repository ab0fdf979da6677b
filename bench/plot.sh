#!/usr/bin/env bash
# Draws the PNG plots of bench/results/ from the JSON that make bench wrote (gnuplot from Debian).
#   docs_per_s.png      docs/s against concurrency, one line per API latency, with the ideal
#   commands_per_doc.png  MongoDB commands per completed document, per claim strategy
set -euo pipefail
cd "$(dirname "$0")/results"
if [ -f engine.json ]; then
  /usr/bin/python3 - <<'PY'
import json
d = json.load(open("engine.json"))
with open("latency.dat", "w") as f:
    for lat in (20, 100, 500):
        for r in d.get("latency", []):
            if r["latency_ms"] == lat:
                f.write("%d %f %f\n" % (r["concurrency"], r["docs_per_s"], r["ideal"]))
        f.write("\n\n")
PY
  gnuplot <<'GP'
set terminal pngcairo size 900,560
set output "docs_per_s.png"
set title "dibs: docs/s against concurrency (memory store, stub API, 2 cores)"
set logscale xy
set xlabel "concurrency (pipelines)"
set ylabel "docs/s"
set key left top
set grid
plot "latency.dat" index 0 using 1:2 with linespoints lw 2 title "20 ms API", \
     "latency.dat" index 1 using 1:2 with linespoints lw 2 title "100 ms API", \
     "latency.dat" index 2 using 1:2 with linespoints lw 2 title "500 ms API", \
     "latency.dat" index 0 using 1:3 with lines dt 2 lc 1 title "ideal 20 ms", \
     "latency.dat" index 1 using 1:3 with lines dt 2 lc 2 title "ideal 100 ms", \
     "latency.dat" index 2 using 1:3 with lines dt 2 lc 3 title "ideal 500 ms"
GP
fi
if [ -f mongo_round_trips.json ]; then
  /usr/bin/python3 -c '
import json
rows = json.load(open("mongo_round_trips.json"))
with open("strategies.dat", "w") as f:
    for r in rows:
        f.write("\"%s\" %f\n" % (r["strategy"], r["commands_per_doc"]))
'
  gnuplot <<'GP'
set terminal pngcairo size 900,500
set output "commands_per_doc.png"
set title "MongoDB commands per completed document"
set style fill solid 0.7
set boxwidth 0.6
set yrange [0:*]
set ylabel "commands / document"
set grid ytics
plot "strategies.dat" using 0:2:xtic(1) with boxes notitle, "" using 0:2:(sprintf("%.3f", $2)) with labels offset 0,1 notitle
GP
fi
rm -f latency.dat strategies.dat
