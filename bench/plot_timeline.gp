# gnuplot script of bench/sustained.sh: ACKs per second against the target rate, live payment actors, busiest thread.
# Usage: gnuplot -e "ackfile='acks.dat'; timefile='timeline.dat'; outfile='out.png'; rate=900; plottitle='...'" plot_timeline.gp
# acks.dat: second acks; timeline.dat: second live_payment_actors inflight_callbacks busiest_thread_cpu_pct
if (!exists("plottitle")) plottitle = "seatflow-bench timeline"
# libgd PNG (palette, no antialiasing): a fraction of the size of pngcairo, fine for a repository.
set terminal png size 900,460 font "DejaVuSans,8" noenhanced
set output outfile
set multiplot layout 2,1 title plottitle
set grid
set key top right
set xlabel "seconds since the load began"
set lmargin 10
set rmargin 10

set ylabel "callbacks/s"
set yrange [0:*]
plot rate with lines linecolor rgb "#aaaaaa" title "offered rate", \
     ackfile using 1:2 with steps linecolor rgb "#3b7dd8" title "ACKs per second"

set ylabel "live payment actors"
set y2label "CPU % of one core"
set y2range [0:110]
set y2tics
set ytics nomirror
plot timefile using 1:2 with lines linecolor rgb "#7f3fbf" title "live payment actors", \
     timefile using 1:4 axes x1y2 with lines linecolor rgb "#d85050" title "busiest engine thread (CPU %)"
unset multiplot
