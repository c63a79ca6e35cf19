# gnuplot script of bench/compare.sh: throughput and latency percentiles per scenario and target, one small PNG.
# Usage: gnuplot -e "datafile='plot.dat'; outfile='out.png'; plottitle='...'" bench/plot.gp
# plot.dat columns: "label" callbacks_per_s p50_ms p95_ms p99_ms
if (!exists("plottitle")) plottitle = "seatflow-bench"
# libgd PNG (palette, no antialiasing): a fraction of the size of pngcairo, fine for a repository.
set terminal png size 1000,420 font "DejaVuSans,8" noenhanced
set output outfile
set multiplot layout 1,2 title plottitle
set style data histograms
set style fill solid 0.85 border -1
set boxwidth 0.8
set grid ytics
set logscale y
set xtics rotate by 0
set key top left
set bmargin 4
set offsets 0, 0, 0, 0

set title "throughput (callbacks/s, log scale)"
set style histogram clustered gap 1
plot datafile using 2:xtic(1) title "callbacks/s" linecolor rgb "#3b7dd8", \
     "" using 0:($2 * 1.35):(sprintf("%.0f", $2)) with labels notitle

set title "latency percentiles (ms, log scale)"
set key top right
set style histogram clustered gap 2
plot datafile using 3:xtic(1) title "p50" linecolor rgb "#7fbf7f", \
     "" using 4 title "p95" linecolor rgb "#f0b050", \
     "" using 5 title "p99" linecolor rgb "#d85050"
unset multiplot
