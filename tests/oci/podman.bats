#!/usr/bin/env bats
# The differential test against podman (issue 32): images built with `podman build` from a
# local base (the default template, `podman import`ed: no network), each imported three
# ways (docker-archive from `podman save`, an OCI layout holding every image with zstd
# layers from `podman push oci:`, a registry with gzip layers from `podman push
# docker://`), and compared path by path with what `podman export` writes for the same
# image (compare-export.py: owners, setuid/setgid bits, device nodes and directory times
# differ by design). Rootless podman with the overlay driver and chroot isolation (no
# cgroups, no network namespace needed); skipped, with the reason, where podman is
# absent or cannot run rootless.

load common
load registry

COMPARE=$BATS_TEST_DIRNAME/compare-export.py

# Where podman keeps everything: the suite's own store, never the user's. No step of it
# may hang the suite.
pm() {
	timeout 120 podman --root "$S/podman/root" --runroot "$PM_RUN/run" --storage-driver overlay \
		--cgroup-manager cgroupfs --events-backend file "$@"
}

# containerfile NAME: the Containerfile of image NAME (FROM the imported base unless it
# says otherwise), on stdin.
containerfile() { mkdir -p "$S/ctx/$1" && cat > "$S/ctx/$1/Containerfile"; }

write_containerfiles() {
	containerfile whiteouts <<-'EOF'
	FROM localhost/edr-base:1
	RUN mkdir -p /w/keep /w/tree/deep && echo gone > /w/gone && echo k > /w/keep/k && echo d > /w/tree/deep/d
	RUN rm -rf /w/gone /w/tree /usr/share /bin/vi && echo back > /w/new
	EOF
	containerfile opaque <<-'EOF'
	FROM localhost/edr-base:1
	RUN mkdir -p /o/sub && echo old > /o/old && echo o2 > /o/sub/old2
	RUN rm -rf /o && mkdir -p /o/sub && echo new > /o/new
	EOF
	containerfile types <<-'EOF'
	FROM localhost/edr-base:1
	RUN mkdir -p /t/d2f /t/d2l && echo f > /t/f2d && echo in > /t/d2f/in && ln -s target /t/l2f && echo f > /t/f2l && echo in > /t/d2l/in
	RUN rm -rf /t/d2f /t/f2d /t/l2f /t/f2l /t/d2l && echo now-file > /t/d2f && mkdir /t/f2d && echo x > /t/f2d/x && echo now-file > /t/l2f && ln -s /etc/passwd /t/f2l && ln -s f2d /t/d2l
	EOF
	# busybox ln, like GNU ln, hard-links a symlink itself.
	containerfile links <<-'EOF'
	FROM localhost/edr-base:1
	RUN mkdir /lk && echo data > /lk/f && ln /lk/f /lk/f2 && ln -s f /lk/s && ln /lk/s /lk/s2 && mkfifo -m 0640 /lk/p && ln /lk/p /lk/p2 && ln -s /nonexistent /lk/dangling && ln -s ../../../../etc /lk/up
	RUN ln /lk/f /lk/f3 && ln /lk/s /lk/s3
	EOF
	# Directories their owner cannot read, each brought back by the next layer.
	containerfile modes <<-'EOF'
	FROM localhost/edr-base:1
	RUN mkdir -p /m/none /m/wx /m/x /m/sticky && echo a > /m/wx/a && echo s > /m/suid && echo z > /m/zero && echo ro > /m/ro && chmod 0000 /m/none /m/zero && chmod 0311 /m/wx && chmod 0111 /m/x && chmod 1777 /m/sticky && chmod 4755 /m/suid && chmod 0444 /m/ro
	RUN echo b > /m/wx/b && echo n > /m/none/n && echo y > /m/x/y && chmod 0711 /m/sticky
	EOF
	containerfile names <<-'EOF'
	FROM localhost/edr-base:1
	RUN n=$(printf 'n%.0s' $(seq 255)) && mkdir /names && echo long > /names/$n && ln -s $n /names/to-long && p=/names/deep && for i in $(seq 30); do p=$p/$(printf 'd%.0s' $(seq 99)); done && mkdir -p $p && echo deep > $p/f
	EOF
	containerfile many <<-'EOF'
	FROM localhost/edr-base:1
	RUN mkdir -p /many/a /many/b && for i in $(seq 1500); do echo $i > /many/a/f$i; echo $i > /many/b/g$i; done
	EOF
	# A layer that changes only modes and times; ENV and LABEL add history without a layer;
	# COPY keeps a user.* attribute (where this filesystem takes one).
	containerfile metadata <<-'EOF'
	FROM localhost/edr-base:1
	RUN mkdir -p /meta/d && echo x > /meta/f && chmod 0640 /meta/f
	ENV FOO=bar
	RUN chmod 0600 /meta/f && chmod 0700 /meta/d && touch -d '2001-02-03 04:05:06' /meta/f
	LABEL edr.test=metadata
	COPY xattr /meta/xattr
	EOF
	echo mime > "$S/ctx/metadata/xattr"
	python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.mime", b"text/plain")' \
		"$S/ctx/metadata/xattr" 2>/dev/null || true
	# An image on another (three levels), whiting out what its parent added.
	containerfile child <<-'EOF'
	FROM localhost/edr-whiteouts
	RUN rm -rf /w/keep && mkdir /w/keep && echo child > /w/keep/c
	EOF
	# --squash-all: the whole history in one layer.
	cp "$S/ctx/types/Containerfile" "$S/ctx/squashed.Containerfile"
	containerfile squashed < "$S/ctx/squashed.Containerfile"
}

IMAGES="whiteouts opaque types links modes names many metadata child squashed"

setup_file() {
	oci_check_prerequisites || return 1
	export PODMAN_SKIP=
	if ! command -v podman >/dev/null; then
		PODMAN_SKIP="podman is not installed (apt-get install podman)"
		return 0
	fi
	command -v docker-registry >/dev/null || { echo "docker-registry is needed" >&2; return 1; }
	fetch_prepare_site
	# podman wants a run root of at most 50 characters (sockets live there).
	export PM_RUN XDG_RUNTIME_DIR
	PM_RUN=$(mktemp -d /tmp/edr-pm.XXXXXX)
	XDG_RUNTIME_DIR=$PM_RUN/xdg
	mkdir -p "$XDG_RUNTIME_DIR" "$S/podman" "$S/certs"
	chmod 700 "$XDG_RUNTIME_DIR"
	local err
	if ! err=$(pm import -q "$EDR_TEMPLATE" localhost/edr-base:1 2>&1 >/dev/null); then
		PODMAN_SKIP="podman cannot run rootless here: $(grep -v 'shared mount' <<< "$err" | head -n 1)"
		return 0
	fi
	start_registry open
	cp "$S/ca.pem" "$S/certs/ca.crt"
	write_containerfiles
	local i squash
	for i in $IMAGES; do
		squash=()
		[[ $i != squashed ]] || squash=(--squash-all)
		pm build -q --isolation chroot --pull=never "${squash[@]}" \
			-t "localhost/edr-$i" "$S/ctx/$i" > /dev/null 2> "$S/build-$i.err" ||
			{ cat "$S/build-$i.err" >&2; return 1; }
		{
			pm save -q --format docker-archive -o "$S/$i.tar" "localhost/edr-$i" &&
			pm push -q --compression-format zstd "localhost/edr-$i" "oci:$S/layout:$i" &&
			pm push -q --cert-dir "$S/certs" "localhost/edr-$i" "docker://$(reg open)/$i:latest" &&
			pm create -q --pull=never --name "c-$i" "localhost/edr-$i" true > /dev/null &&
			pm export -o "$S/$i.export.tar" "c-$i"
		} 2> "$S/save-$i.err" || { cat "$S/save-$i.err" >&2; return 1; }
	done
	echo "# podman built, saved, pushed and exported ${IMAGES// /, } in ${SECONDS}s" >&3
}

teardown_file() {
	stop_registries
	[[ -n ${PODMAN_SKIP-} || -z ${PM_RUN-} ]] || {
		# The store holds files of the user namespace's other ids: only podman removes them.
		# Twice: the overlay mounts of the first user namespace keep its mount points busy
		# until its pause process is gone.
		local pause=$XDG_RUNTIME_DIR/libpod/tmp/pause.pid round
		for round in 1 2; do
			pm unshare rm -rf "$S/podman/root" "$PM_RUN/run" 2>/dev/null
			[[ ! -s $pause ]] || kill "$(cat "$pause")" 2>/dev/null || true
		done
		rm -rf "$PM_RUN"
	}
	fetch_teardown_file
}

setup() {
	[[ -z $PODMAN_SKIP ]] || skip "$PODMAN_SKIP"
	oci_setup
}
teardown() {
	# Roots with directories their owner cannot read or enter, left by a failed test.
	chmod -R u+rwx "$XDG_DATA_HOME/enter-devroot/roots" 2>/dev/null || true
	fetch_teardown
}

# same_as_podman IMAGE: each of the three imports of IMAGE is the tree podman exports.
# Left out on both sides: what podman adds to a container (dev, proc, sys, run/.containerenv,
# the etc files it mounts over); in the root only: what create adds (the user's account).
same_as_podman() {
	local img=$1 how from
	for how in archive layout registry; do
		case $how in
		archive) from=(--from "docker-archive:$S/$img.tar") ;;
		layout) from=(--from "oci:$S/layout:$img") ;;
		registry) from=(--from "docker://$(reg open)/$img:latest" --cacert "$S/ca.pem") ;;
		esac
		edr_run create "$img-$how" "${from[@]}" --quiet
		assert_status 0
		run python3 "$COMPARE" "$S/$img.export.tar" "$(root_of "$img-$how")" \
			--ignore dev --ignore proc --ignore sys --ignore run/.containerenv \
			--ignore etc/passwd --ignore etc/group --extra home
		[[ $status -eq 0 ]] || fail "$how import of $img differs from podman export: $output"
		edr remove "$img-$how"
	done
}

@test "podman: whiteouts of a layer's and of the base's files" { same_as_podman whiteouts; }
@test "podman: an opaque directory" { same_as_podman opaque; }
@test "podman: type changes across layers (file, directory, symlink)" { same_as_podman types; }
@test "podman: hard links to files, symlinks and FIFOs, across layers" { same_as_podman links; }
@test "podman: directories their owner cannot read, in two layers; sticky, setuid, 0000 files" { same_as_podman modes; }
@test "podman: a 255-byte name and a 3000-byte path" { same_as_podman names; }
@test "podman: 3000 files" { same_as_podman many; }
@test "podman: a layer of modes and times only, history without layers, a user.* xattr" { same_as_podman metadata; }
@test "podman: an image built on another" { same_as_podman child; }
@test "podman: a squashed image" { same_as_podman squashed; }
