# Ratios against each table's reference (1.0 = as fast). Called by bench/run:
# gnuplot -e "dat='FILE'; out='SVG'" bench/plot.gp
set terminal svg size 900,700 dynamic font "sans,10"
set output out
set title "enter-devroot vs peers: time ratio to each table's reference (lower is faster)"
set style fill solid 0.6
set boxwidth 0.7
set xtics rotate by -60 scale 0
set logscale y
set ylabel "ratio (log scale)"
set grid ytics
set key off
set yrange [0.3:*]
plot dat using 0:2:xtic(1) with boxes lc rgb "#4477aa", \
     1 with lines lc rgb "#cc3311" dt 2
