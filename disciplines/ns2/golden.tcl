# golden.tcl - qlab-ns2-golden: the golden vectors through ns-2's Queue/Qlab
# (disciplines/ns2/qlab-golden.cc).  Run as `ns golden.tcl DISC [ARGS]...`.
set ns [new Simulator]
set q [new Queue/Qlab/Golden]
set g [new QlabGolden]
if {[catch {eval [list $g run $q] $argv} err]} {
	puts stderr "qlab-ns2-golden: $err"
	exit 3
}
exit 0
