#!/bin/sh
# suite-load: the modules load, register their qdiscs and unload.
. /guest/lib.sh
check "insmod qlab_core and the five qdisc modules" load_qlab
for q in qlab ncq cqaqm srd rbwfq; do
	check "qdisc $q registered" grep -q "sch_$q" /proc/modules
done
