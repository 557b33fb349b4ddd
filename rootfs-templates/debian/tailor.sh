#!/bin/sh
# mmdebstrap customize hook: adapt a Debian root to an unprivileged chroot (no_new_privs,
# no /dev, no /proc, every file owned by the user who unpacked it). $1 is the root.
set -eu
r=${1:?usage: tailor.sh ROOT}

# apt drops privileges to _apt for downloads: setgroups/setresuid fail without privileges
# (and would be refused under no_new_privs anyway), so download as whoever runs apt.
cat > "$r/etc/apt/apt.conf.d/90enter-devroot" <<'APT'
// enter-devroot: the root runs without privileges; there is no _apt user to switch to.
APT::Sandbox::User "root";
// No /dev inside (no /dev/ptmx): dpkg's output must not go through a pseudo-terminal.
Dpkg::Use-Pty "false";
APT

# No init system runs inside: service scripts called by maintainer scripts must do nothing.
printf '#!/bin/sh\nexit 101\n' > "$r/usr/sbin/policy-rc.d"
chmod 0755 "$r/usr/sbin/policy-rc.d"

# Files that describe the build host, not the devroot's user; mmdebstrap already empties
# resolv.conf and hostname. machine-id is per-install by design.
: > "$r/etc/machine-id"
rm -f "$r/var/lib/dbus/machine-id"

# Nothing to keep from the build: package lists and the .deb cache are refetched by
# 'apt-get update', logs describe the build machine.
rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin "$r"/var/cache/apt/archives/*.deb
rm -f "$r"/var/log/*.log "$r"/var/log/apt/*

# A home for the user enter-devroot adds to /etc/passwd; /tmp and /var/tmp sticky, as in
# any root, because the tool keeps the sticky bit while dropping setuid/setgid.
mkdir -p "$r/home" "$r/tmp" "$r/var/tmp"
chmod 1777 "$r/tmp" "$r/var/tmp"

# Which template this root came from, for people and scripts inside it.
echo "${EDR_TEMPLATE_NAME:-debian}" > "$r/etc/enter-devroot-template"
