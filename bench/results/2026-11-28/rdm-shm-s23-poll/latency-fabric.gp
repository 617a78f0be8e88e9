set terminal pngcairo size 1600,900 noenhanced
set output 'latency-fabric.png'
set multiplot layout 2,4 title 'p50 latency vs size, fabric environment (median of 3 runs)'
set logscale xy; set format x '%.0s%c'; set xlabel 'bytes'; set ylabel 'us'; set grid; set key top left
set title 'read'
plot 'lat-fabric-read-ours.dat' using 1:2 with linespoints title 'ours','lat-fabric-read-raw-fabric-delivery.dat' using 1:2 with linespoints title 'raw-fabric-delivery'
set title 'send-recv'
plot 'lat-fabric-send-recv-ours.dat' using 1:2 with linespoints title 'ours','lat-fabric-send-recv-raw-fabric-delivery.dat' using 1:2 with linespoints title 'raw-fabric-delivery'
set title 'write'
plot 'lat-fabric-write-ours.dat' using 1:2 with linespoints title 'ours','lat-fabric-write-raw-fabric-delivery.dat' using 1:2 with linespoints title 'raw-fabric-delivery'
set title 'write-flush-v'
plot 'lat-fabric-write-flush-v-ours.dat' using 1:2 with linespoints title 'ours','lat-fabric-write-flush-v-raw-fabric-delivery.dat' using 1:2 with linespoints title 'raw-fabric-delivery'
unset multiplot
