#! /bin/bash
#Copyright (C) 2026 the enter-devroot project
#
#This program is free software; you can redistribute it and/or
#modify it under the terms of the GNU General Public License as
#published by the Free Software Foundation, version 2 of the
#License.

#=NAME unpriv_chroot
#=DESCRIPTION
# This test verifies the mediation of chroot(2) and fchroot(2) by a task
# without CAP_SYS_CHROOT (fs.unprivileged_chroot=1): a confined task needs
# "capability sys_chroot", as on the privileged path.
#=END

pwd=`dirname $0`
pwd=`cd $pwd ; /bin/pwd`

bin=$pwd

. $bin/prologue.inc

requires_kernel_features caps/unprivileged_chroot

sysctl_path=/proc/sys/fs/unprivileged_chroot
if [ ! -e $sysctl_path ]; then
	echo "$sysctl_path not available. Skipping tests ..."
	exit 0
fi
old_sysctl=$(cat $sysctl_path)
restore_sysctl()
{
	echo $old_sysctl > $sysctl_path
}
do_onexit="restore_sysctl"
echo 1 > $sysctl_path

jail=$tmpdir/jail
mkdir $jail
chmod 755 $tmpdir $jail

do_test()
{
	local desc="UNPRIV_CHROOT ($1)"
	local expect=$2
	local generate_profile=$3

	settest -u "foo" unpriv_chroot # run tests as user foo
	$generate_profile # settest removes the profile, so load it here
	runchecktest "$desc - chroot" $expect $jail
	runchecktest "$desc - fchroot" $expect -f $jail
}

do_test "unconfined" pass
do_test "confined, capability sys_chroot" pass "genprofile cap:sys_chroot $jail:r"
do_test "confined, no capability" fail "genprofile $jail:r"
